//! The client side never calls the simulator's own endpoints (`/_sim/...`): whether a service
//! can set targets comes from the profile's set-target operation, never from asking whether the
//! service is the simulator. Only the code that runs the simulator may name them: the embedded
//! simulator's module, and `dcs sim` (its banner names its control endpoints).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs" || e == "ts" || e == "tsx") {
            out.push(path);
        }
    }
}

/// The text of `file` that may not name `/_sim/`: all of it, but for `dcs sim`'s own function.
fn checked_text(file: &Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    if file.ends_with("crates/cli/src/main.rs") {
        let start = text.find("async fn run_sim(").expect("`dcs sim` runs in main.rs");
        let end = text[start..].find("\n}\n").map(|e| start + e).unwrap_or(text.len());
        return format!("{}{}", &text[..start], &text[end..]);
    }
    text
}

#[test]
fn no_client_code_calls_the_simulators_own_endpoints() {
    let root = root();
    let mut files = Vec::new();
    for dir in ["crates/api/src", "crates/console/src", "crates/cli/src", "src-tauri/src", "ui/src"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 30, "found only {} files under {}", files.len(), root.display());
    let allowed = [root.join("crates/console/src/simulator.rs")];
    let mut offenders = Vec::new();
    for file in &files {
        if allowed.contains(file) {
            continue;
        }
        for (i, line) in checked_text(file).lines().enumerate() {
            if line.contains("_sim/") {
                offenders.push(format!(
                    "{}:{}: {}",
                    file.strip_prefix(&root).unwrap_or(file).display(),
                    i + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(offenders.is_empty(), "client code names the simulator's endpoints:\n{}", offenders.join("\n"));
}

#[test]
fn the_check_sees_a_call_outside_dcs_sim() {
    // The region cut out of main.rs is `dcs sim`'s function only.
    let main = root().join("crates/cli/src/main.rs");
    let all = std::fs::read_to_string(&main).unwrap();
    let checked = checked_text(&main);
    assert!(all.contains("_sim/info") && !checked.contains("_sim/info"), "the banner is inside run_sim");
    assert!(checked.contains("async fn connect("), "the rest of main.rs is still checked");
}
