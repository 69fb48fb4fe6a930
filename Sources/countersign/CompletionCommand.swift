/// `countersign completion bash|zsh|fish`: a completion script for that shell, printed so a
/// user can `source` it; the Debian package installs each where its shell looks.
enum CompletionCommand {
    static let usage = "Usage: countersign completion bash|zsh|fish"

    /// The options each command takes, as the scripts offer them.
    static let options: [(command: String, options: [String])] = [
        ("run", ["-c", "--config", "--help"]),
        ("check", ["-c", "--config", "--online", "--no-secrets", "--host", "--chain", "--at", "--help"]),
        ("schema", ["--help"]),
        ("ca", ["init", "show", "--dir", "--force", "--unconstrained", "-c", "--config", "--help"]),
        ("pin", ["-c", "--config", "--anchors", "--server-name", "--help"]),
        ("completion", ["bash", "zsh", "fish"]),
        ("help", []),
    ]

    /// Options that take a file name.
    static let fileOptions = ["-c", "--config", "--chain", "--anchors", "--dir"]

    static func run(_ words: [String]) -> Int32 {
        switch words {
        case ["bash"]: print(bash, terminator: "")
        case ["zsh"]: print(zsh, terminator: "")
        case ["fish"]: print(fish, terminator: "")
        case ["--help"], ["-h"]: print(usage)
        default:
            printError("countersign completion: name one shell: bash, zsh or fish\n\n\(usage)")
            return ExitCode.usage
        }
        return ExitCode.success
    }

    static var bash: String {
        let cases = options.map { "        \($0.command)) words=\"\($0.options.joined(separator: " "))\" ;;" }.joined(separator: "\n")
        return """
        # bash completion for countersign (countersign completion bash)
        _countersign() {
            local current previous words
            current="${COMP_WORDS[COMP_CWORD]}"
            previous="${COMP_WORDS[COMP_CWORD-1]}"
            case "$previous" in
                \(fileOptions.joined(separator: "|"))) COMPREPLY=($(compgen -f -- "$current")); return ;;
            esac
            if [ "$COMP_CWORD" -eq 1 ]; then
                COMPREPLY=($(compgen -W "\(HelpText.commands.joined(separator: " ")) --version --help" -- "$current"))
                return
            fi
            case "${COMP_WORDS[1]}" in
        \(cases)
                *) words="" ;;
            esac
            COMPREPLY=($(compgen -W "$words" -- "$current"))
        }
        complete -F _countersign countersign

        """
    }

    static var zsh: String {
        let cases = options.map { "    \($0.command)) compadd -- \($0.options.joined(separator: " ")) ;;" }.joined(separator: "\n")
        return """
        #compdef countersign
        # zsh completion for countersign (countersign completion zsh)
        _countersign() {
          if (( CURRENT == 2 )); then
            compadd -- \(HelpText.commands.joined(separator: " ")) --version --help
            return
          fi
          case ${words[CURRENT-1]} in
            \(fileOptions.joined(separator: "|"))) _files; return ;;
          esac
          case ${words[2]} in
        \(cases)
          esac
        }
        if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
          _countersign "$@"
        else
          compdef _countersign countersign
        fi

        """
    }

    static var fish: String {
        var lines = ["# fish completion for countersign (countersign completion fish)",
                     "complete -c countersign -f",
                     "complete -c countersign -n __fish_use_subcommand -a '\(HelpText.commands.joined(separator: " "))'",
                     "complete -c countersign -n __fish_use_subcommand -l version -d 'print the version'"]
        for (command, options) in options {
            let words = options.filter { !$0.hasPrefix("-") }
            if !words.isEmpty {
                lines.append("complete -c countersign -n '__fish_seen_subcommand_from \(command)' -a '\(words.joined(separator: " "))'")
            }
            for option in options where option.hasPrefix("--") {
                let takesFile = fileOptions.contains(option) ? " -r -F" : ""
                lines.append("complete -c countersign -n '__fish_seen_subcommand_from \(command)' -l \(option.dropFirst(2))\(takesFile)")
            }
            if options.contains("-c") {
                lines.append("complete -c countersign -n '__fish_seen_subcommand_from \(command)' -s c -r -F")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
