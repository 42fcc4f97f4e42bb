//! Confirmation of destructive commands: asked on a terminal, skipped with `--yes`, refused
//! when stdin is not a terminal and `--yes` was not given.

use std::io::{BufRead, IsTerminal, Write};

/// Asks "`question`? [y/N]" on stderr; anything but `y`/`yes` declines.
pub fn confirm(question: &str, yes: bool) -> anyhow::Result<()> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        anyhow::bail!(
            "refusing to {} without --yes: stdin is not a terminal to ask for confirmation",
            lower_first(question)
        );
    }
    eprint!("{question}? [y/N] ");
    std::io::stderr().flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Ok(()),
        _ => anyhow::bail!("cancelled: nothing was changed"),
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
