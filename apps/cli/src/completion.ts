import type { Command } from 'commander';

/**
 * Candidates for the word being completed, after `words` (what is typed so far, the command name
 * left out): the subcommands of the deepest command named, and its long options. The shell scripts
 * below ask `gantry __complete <words...>` for them, so they never go stale as commands change.
 */
export function completionCandidates(program: Command, words: string[]): string[] {
  let command = program;
  for (const w of words) {
    const sub = command.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (sub) command = sub;
  }
  const subcommands = command.commands.filter((c) => !c.name().startsWith('__')).map((c) => c.name());
  const options = command.options.map((o) => o.long).filter((o): o is string => !!o);
  return [...subcommands, ...options, '--help'];
}

export const COMPLETION_SCRIPTS = {
  bash: `# gantry completion for bash: add to ~/.bashrc
#   source <(gantry completion bash)
_gantry_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local IFS=$'\\n'
  COMPREPLY=( $(compgen -W "$(gantry __complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)" -- "$cur") )
}
complete -o default -F _gantry_complete gantry
`,
  zsh: `#compdef gantry
# gantry completion for zsh: add to ~/.zshrc
#   source <(gantry completion zsh)
_gantry() {
  local -a candidates
  candidates=("\${(@f)$(gantry __complete "\${(@)words[2,CURRENT-1]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _gantry gantry
`,
} as const;
