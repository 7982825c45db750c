/** The completion scripts. */
export const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;
export type Shell = (typeof SHELLS)[number];

export const INSTALL: Record<Shell, string> = {
  bash: `# bash: add to ~/.bashrc (needs bash 4.1+)
#   source <(imaging completion bash)
# or save it where bash-completion finds it:
#   imaging completion bash > ~/.local/share/bash-completion/completions/imaging`,
  zsh: `# zsh: save it on your fpath, before compinit runs:
#   imaging completion zsh > "\${fpath[1]}/_imaging"
# or add to ~/.zshrc, after compinit:
#   source <(imaging completion zsh)`,
  fish: `# fish:
#   imaging completion fish > ~/.config/fish/completions/imaging.fish`,
  powershell: `# PowerShell: add to your profile ($PROFILE)
#   imaging completion powershell | Out-String | Invoke-Expression`,
};

export function completionScript(shell: Shell, name = 'imaging'): string {
  const fn = `_${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
  switch (shell) {
    case 'bash':
      return bashScript(fn, name);
    case 'zsh':
      return zshScript(fn, name);
    case 'fish':
      return fishScript(fn, name);
    case 'powershell':
      return powershellScript(name);
  }
}

function bashScript(fn: string, name: string): string {
  return `${INSTALL.bash}
${fn}_complete() {
  # COMP_WORDS is cut at COMP_WORDBREAKS (--env=lo is --env, =, lo; a:b is a, :, b): words that
  # touch in the line are joined again, so the program sees the words as typed. Without COMP_LINE
  # (a caller setting COMP_WORDS itself), words are joined around a lone "=".
  local words=() w i n touch exact= line="\${COMP_LINE:0:COMP_POINT}" cur tail prefix v out files=
  [[ -n $COMP_LINE ]] && exact=1
  for (( i = 0; i <= COMP_CWORD; i++ )); do
    w=\${COMP_WORDS[i]} n=\${#words[@]} touch=
    if [[ -n $exact ]]; then
      if [[ $line == [[:space:]]* ]]; then line=\${line#"\${line%%[![:space:]]*}"}; else touch=1; fi
      if [[ $line == "$w"* ]]; then line=\${line:\${#w}}; else exact=; fi
    elif [[ $w == = || ( $n -gt 1 && \${words[n-1]} == *= ) ]]; then
      touch=1
    fi
    if (( i > 1 )) && [[ -n $touch ]]; then words[n-1]+=$w; else words+=("$w"); fi
  done
  n=\${#words[@]}
  cur=\${words[n-1]}
  out=$("\${words[0]}" __complete "\${words[@]:1:n-2}" "=$cur" 2>/dev/null) || return 0
  # Readline replaces only the text after the last word break (after "=" in --env=lo): each
  # answer loses what comes before it.
  tail=\${cur##*["$COMP_WORDBREAKS"]}
  prefix=\${cur:0:\${#cur}-\${#tail}}
  COMPREPLY=()
  while IFS= read -r v; do
    [[ -z $v ]] && continue
    if [[ $v == :files ]]; then files=f; continue; fi
    if [[ $v == :folders ]]; then files=d; continue; fi
    # An item of a comma list: no space after it, so ",next" can be typed on.
    if [[ $v == :list ]]; then compopt -o nospace 2>/dev/null; continue; fi
    v=\${v%%$'\\t'*}
    [[ $v == "$prefix"* ]] && COMPREPLY+=("\${v:\${#prefix}}")
  done <<<"$out"
  if [[ -n $files ]]; then
    compopt -o filenames 2>/dev/null
    # A file flag's value after "=" (-o=out/x) is the file name; the flag stays as typed.
    local flag=
    [[ $cur == -*=* ]] && flag=\${cur%%=*}= cur=\${cur#*=}
    while IFS= read -r v; do
      v=$flag$v
      [[ $v == "$prefix"* ]] && COMPREPLY+=("\${v:\${#prefix}}")
    done < <(compgen -$files -- "$cur")
  fi
  return 0
}
complete -F ${fn}_complete ${name}
`;
}

function zshScript(fn: string, name: string): string {
  return `#compdef ${name}
${INSTALL.zsh}
${fn}() {
  local -a lines values shown
  local line files= suffix=()
  lines=("\${(@f)$("\${words[1]}" __complete "\${(@)words[2,CURRENT-1]}" "=\${words[CURRENT]}" 2>/dev/null)}")
  for line in "\${lines[@]}"; do
    [[ -z $line ]] && continue
    if [[ $line == :files ]]; then files=any; continue; fi
    if [[ $line == :folders ]]; then files=folders; continue; fi
    if [[ $line == :list ]]; then suffix=(-S ''); continue; fi
    values+=("\${line%%$'\\t'*}")
    if [[ $line == *$'\\t'* ]]; then shown+=("\${line%%$'\\t'*}  -- \${line#*$'\\t'}"); else shown+=("$line"); fi
  done
  (( \${#values} )) && compadd "\${suffix[@]}" -l -d shown -a values
  [[ $files == any ]] && _files
  [[ $files == folders ]] && _files -/
  return 0
}
if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${name}
fi
`;
}

function fishScript(fn: string, name: string): string {
  return `${INSTALL.fish}
function __${fn.slice(1)}_complete
    set -l tokens (commandline -opc)
    set -l current (commandline -ct)
    for line in ($tokens[1] __complete $tokens[2..-1] "=$current" 2>/dev/null)
        if test "$line" = ":list"
            continue
        else if test "$line" = ":folders"
            for candidate in "$current"*
                test -d "$candidate"; and printf '%s/\\n' "$candidate"
            end
        else if test "$line" = ":files"
            # Not __fish_complete_path: it runs \`ls -dp\` without --, so a file named like an
            # option (-rf.csv) breaks it. The glob is listed here, directories with a slash.
            for candidate in "$current"*
                if test -d "$candidate"
                    printf '%s/\\n' "$candidate"
                else
                    printf '%s\\n' "$candidate"
                end
            end
        else
            printf '%s\\n' $line
        end
    end
end
complete -c ${name} -f -a '(__${fn.slice(1)}_complete)'
`;
}

function powershellScript(name: string): string {
  return `${INSTALL.powershell}
Register-ArgumentCompleter -Native -CommandName '${name}' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $elements = @($commandAst.CommandElements | Where-Object { $_.Extent.EndOffset -lt $cursorPosition -or ($_.Extent.EndOffset -eq $cursorPosition -and $wordToComplete -eq '') })
    $words = @($elements | ForEach-Object { $_.ToString() })
    $program = $words[0]
    $before = @()
    if ($words.Count -gt 1) { $before = $words[1..($words.Count - 1)] }
    $answer = & $program __complete @before "=$wordToComplete" 2>$null
    foreach ($line in $answer) {
        if ($line -eq ':list') { continue }
        if ($line -eq ':folders') {
            Get-ChildItem -Directory -Path "$wordToComplete*" -ErrorAction SilentlyContinue | ForEach-Object {
                [System.Management.Automation.CompletionResult]::new($_.Name, $_.Name, 'ProviderContainer', $_.Name)
            }
            continue
        }
        if ($line -eq ':files') {
            Get-ChildItem -Path "$wordToComplete*" -ErrorAction SilentlyContinue | ForEach-Object {
                [System.Management.Automation.CompletionResult]::new($_.Name, $_.Name, 'ProviderItem', $_.Name)
            }
            continue
        }
        $parts = $line -split "\`t", 2
        $tip = if ($parts.Count -gt 1 -and $parts[1]) { $parts[1] } else { $parts[0] }
        [System.Management.Automation.CompletionResult]::new($parts[0], $parts[0], 'ParameterValue', $tip)
    }
}
`;
}
