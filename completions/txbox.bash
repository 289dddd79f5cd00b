# bash completion for txbox                                  -*- shell-script -*-
# Install: make install (to $(PREFIX)/share/bash-completion/completions/txbox), or source it.

_txbox_ids()
{
        # Transaction ids from the log of the workspace being completed for (-C DIR honoured).
        local ws=() i
        for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                -C | --workspace) ws=(-C "${COMP_WORDS[i + 1]}") ;;
                esac
        done
        txbox "${ws[@]}" log --json 2>/dev/null | grep -o '"tx": "[0-9a-f]*"' | cut -d'"' -f4
}

_txbox()
{
        local cur prev verb i
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        local verbs="run sh check log show diff commit rollback undo recover gc begin doctor report hook mcp agent trust prefix"

        for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                -C | --workspace | --state | --policy) ((i++)) ;;
                -*) ;;
                *) verb=${COMP_WORDS[i]}; break ;;
                esac
        done
        case $prev in
        -C | --workspace | --state) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --policy | --report | --html | --cursor) COMPREPLY=($(compgen -f -- "$cur")); return ;;
        esac
        if [ -z "${verb:-}" ]; then
                COMPREPLY=($(compgen -W "$verbs -C --workspace --state --policy --help --version" -- "$cur"))
                return
        fi
        case $verb in
        run | sh | prefix)
                case $cur in
                --commit=*) COMPREPLY=($(compgen -W "auto keep discard" -- "${cur#--commit=}")) ;;
                --net=*) COMPREPLY=($(compgen -W "none loopback host allow:" -- "${cur#--net=}")) ;;
                --tx=*) COMPREPLY=($(compgen -W "$(_txbox_ids)" -- "${cur#--tx=}")) ;;
                -*) COMPREPLY=($(compgen -W "--commit= --net= --timeout= --report= --tx= --env= --allow-unix-sockets
                        --max-procs= --max-memory= --max-disk= --max-files= --max-open-files= --max-cpu= --max-cpus=
                        --verbose --help" -- "$cur")) ;;
                *) COMPREPLY=($(compgen -c -- "$cur")) ;;
                esac
                [[ ${COMPREPLY[0]:-} == *= ]] && compopt -o nospace
                ;;
        diff)
                case $cur in
                -*) COMPREPLY=($(compgen -W "--stat --since --help" -- "$cur")) ;;
                *) COMPREPLY=($(compgen -W "$(_txbox_ids)" -- "$cur")) ;;
                esac
                ;;
        show | commit | rollback | undo)
                case $cur in
                -*) COMPREPLY=($(compgen -W "--json --to --help" -- "$cur")) ;;
                *) COMPREPLY=($(compgen -W "$(_txbox_ids)" -- "$cur")) ;;
                esac
                ;;
        log) COMPREPLY=($(compgen -W "--json -n --json-lines --since --follow --cursor --help" -- "$cur")) ;;
        gc)
                COMPREPLY=($(compgen -W "--keep= --max-age= --max-size= --save --show --dry-run --json --help" -- "$cur"))
                [[ ${COMPREPLY[0]:-} == *= ]] && compopt -o nospace
                ;;
        doctor) COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ;;
        report) COMPREPLY=($(compgen -W "--html -n --help" -- "$cur")) ;;
        check) COMPREPLY=($(compgen -W "--json -c --test --help" -- "$cur")) ;;
        trust) COMPREPLY=($(compgen -W "--status --revoke --help" -- "$cur")) ;;
        hook) COMPREPLY=($(compgen -W "claude-code codex gemini --help" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -W "--help" -- "$cur")) ;;
        esac
}
complete -F _txbox txbox
