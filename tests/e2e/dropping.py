"""What the e2e tests and the app benchmark share to hand files to the app."""


def drop_file_on(driver, element, path):
    """Sends the drag-drop event the OS drop would, at the element's centre (physical pixels)."""
    driver.execute_async_script(
        """
        const [el, path, done] = arguments;
        const r = el.getBoundingClientRect();
        const ratio = window.devicePixelRatio;
        const position = { x: (r.left + r.width / 2) * ratio, y: (r.top + r.height / 2) * ratio };
        window.__TAURI_INTERNALS__
          .invoke("plugin:event|emit", { event: "tauri://drag-drop", payload: { paths: [path], position } })
          .then(() => done(), (e) => done(String(e)));
        """,
        element,
        path,
    )
