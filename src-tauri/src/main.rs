// Keep a console window from opening next to the app on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

fn main() {
    // `dcs-console --export-bindings <file>` writes the TypeScript bindings of every command and
    // type, generated from the Rust definitions, and exits without opening a window.
    let mut args = std::env::args().skip(1);
    if args.next().as_deref() == Some("--export-bindings") {
        let path = args.next().unwrap_or_else(|| "ui/src/bindings.ts".to_owned());
        if let Err(e) = dcs_app::export_bindings(&path) {
            eprintln!("could not export bindings to {path}: {e}");
            std::process::exit(1);
        }
        return;
    }
    dcs_app::run();
}
