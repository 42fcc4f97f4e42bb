import { render } from "preact";
import { App } from "./app";
import { commands } from "./bindings";
import { installIpcRecorder } from "./lib/ipcRecorder";
import "./styles.css";

installIpcRecorder(commands as unknown as Parameters<typeof installIpcRecorder>[0]);
render(<App />, document.getElementById("app")!);
