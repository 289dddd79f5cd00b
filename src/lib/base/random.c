/* Random names. */
#include "base/random.h"

#include <stdint.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/clock.h"

void random_hex(char *out, size_t nbytes)
{
        unsigned char buf[64];
        static const char hex[] = "0123456789abcdef";

        if (nbytes > sizeof(buf))
                nbytes = sizeof(buf);
        if (getrandom(buf, nbytes, 0) != (ssize_t)nbytes) {
                /* getrandom cannot fail for small sizes after boot; fall back to time+pid. */
                uint64_t x = (uint64_t)mono_us() ^ ((uint64_t)getpid() << 32);
                for (size_t i = 0; i < nbytes; i++, x = x * 6364136223846793005ULL + 1)
                        buf[i] = (unsigned char)(x >> 56);
        }
        for (size_t i = 0; i < nbytes; i++) {
                out[2 * i] = hex[buf[i] >> 4];
                out[2 * i + 1] = hex[buf[i] & 15];
        }
        out[2 * nbytes] = '\0';
}
