//! One app per data folder: a second launch hands its arguments (a `dcs-console://` link) to the
//! app already running on the same data folder and ends; that app shows its window and opens
//! the link.
//!
//! The first app holds an exclusive lock on `instance.lock` in the data folder for as long as it
//! runs (the OS drops it when the process ends, however it ends: a crash leaves nothing to
//! clean up) and listens on a Unix socket beside it. A launch that cannot take the lock connects
//! to that socket and writes its arguments as one JSON array on one line. Keyed by the data
//! folder, not the user: two consoles on two data folders (the tests, side by side) are two
//! apps. Tauri's single-instance plugin keys by the app's identifier only and, on Linux, needs a
//! D-Bus session bus (it panics without one), hence this.
//!
//! What arrives on the socket comes from any process of the user: it is read with a size cap and
//! a deadline, parsed as a list of strings, and never acted on as more than arguments to parse.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most a second launch may write (its arguments as JSON).
pub const MAX_MESSAGE: u64 = 64 * 1024;
/// How long a connection may take to say its arguments.
const READ_DEADLINE: Duration = Duration::from_secs(2);
/// How long a second launch waits for the first app's socket (it may be starting).
const CONNECT_FOR: Duration = Duration::from_secs(3);

/// The outcome of [`claim`].
pub enum Claim {
    /// No app runs on this data folder: this one is the first ([`Primary::serve`]).
    First(Primary),
    /// An app runs on this data folder and was given the arguments: this launch should end.
    Handed,
}

/// The first app's hold on its data folder: the lock and the socket.
pub struct Primary {
    _lock: File,
    #[cfg(unix)]
    listener: std::os::unix::net::UnixListener,
}

#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    #[error("the data folder {0} cannot hold the app's lock: {1}")]
    Lock(PathBuf, std::io::Error),
    #[error("the socket path {0} is too long for this system (at most 100 bytes)")]
    PathTooLong(PathBuf),
    #[error("another console runs on {0} but did not answer: {1}")]
    NoAnswer(PathBuf, std::io::Error),
    #[error("the console's socket {0} cannot be opened: {1}")]
    Socket(PathBuf, std::io::Error),
}

fn lock_path(dir: &Path) -> PathBuf {
    dir.join("instance.lock")
}

fn socket_path(dir: &Path) -> PathBuf {
    dir.join("instance.sock")
}

/// Takes this data folder for this app, or hands `args` to the app that holds it.
pub fn claim(dir: &Path, args: &[String]) -> Result<Claim, InstanceError> {
    std::fs::create_dir_all(dir).map_err(|e| InstanceError::Lock(dir.to_owned(), e))?;
    let socket = socket_path(dir);
    if socket.as_os_str().len() > 100 {
        return Err(InstanceError::PathTooLong(socket));
    }
    let lock_file = lock_path(dir);
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_file)
        .map_err(|e| InstanceError::Lock(lock_file.clone(), e))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return hand_over(&socket, args).map(|()| Claim::Handed),
        Err(std::fs::TryLockError::Error(e)) => return Err(InstanceError::Lock(lock_file, e)),
    }
    listen(lock, &socket)
}

#[cfg(unix)]
fn listen(lock: File, socket: &Path) -> Result<Claim, InstanceError> {
    // A socket file left by an app that ended without removing it: the lock says none runs.
    match std::fs::remove_file(socket) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(InstanceError::Socket(socket.to_owned(), e)),
    }
    let listener =
        std::os::unix::net::UnixListener::bind(socket).map_err(|e| InstanceError::Socket(socket.to_owned(), e))?;
    Ok(Claim::First(Primary { _lock: lock, listener }))
}

#[cfg(not(unix))]
fn listen(lock: File, _socket: &Path) -> Result<Claim, InstanceError> {
    Ok(Claim::First(Primary { _lock: lock }))
}

#[cfg(unix)]
fn hand_over(socket: &Path, args: &[String]) -> Result<(), InstanceError> {
    let deadline = std::time::Instant::now() + CONNECT_FOR;
    let mut stream = loop {
        match std::os::unix::net::UnixStream::connect(socket) {
            Ok(s) => break s,
            // The first app took the lock and has not bound its socket yet.
            Err(e) if std::time::Instant::now() < deadline => {
                tracing::debug!(error = %e, "waiting for the running console's socket");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(InstanceError::NoAnswer(socket.to_owned(), e)),
        }
    };
    let mut line = serde_json::to_vec(args).expect("strings serialize");
    line.push(b'\n');
    let io = |e| InstanceError::NoAnswer(socket.to_owned(), e);
    stream.set_write_timeout(Some(READ_DEADLINE)).map_err(io)?;
    stream.set_read_timeout(Some(READ_DEADLINE)).map_err(io)?;
    stream.write_all(&line).map_err(io)?;
    // The answer says the arguments were read; its absence is no reason to start a second app.
    let mut answer = [0u8; 3];
    let _ = stream.read(&mut answer);
    Ok(())
}

#[cfg(not(unix))]
fn hand_over(socket: &Path, _args: &[String]) -> Result<(), InstanceError> {
    Err(InstanceError::NoAnswer(socket.to_owned(), std::io::Error::other("not supported on this system")))
}

impl Primary {
    /// Answers later launches on a thread of its own for as long as the process runs: each one's
    /// arguments go to `on_args` (a launch that says nothing readable is dropped).
    #[cfg(unix)]
    pub fn serve(self, on_args: impl Fn(Vec<String>) + Send + 'static) {
        std::thread::Builder::new()
            .name("dcs-instance".into())
            .spawn(move || {
                let _lock = self._lock;
                for stream in self.listener.incoming() {
                    match stream {
                        Ok(s) => match read_args(s) {
                            Ok(args) => on_args(args),
                            Err(e) => tracing::warn!(error = %e, "a second launch's message was not readable"),
                        },
                        Err(e) => {
                            tracing::warn!(error = %e, "the console's socket stopped answering");
                            return;
                        }
                    }
                }
            })
            .expect("a thread can be started");
    }

    #[cfg(not(unix))]
    pub fn serve(self, _on_args: impl Fn(Vec<String>) + Send + 'static) {
        std::mem::forget(self._lock);
    }
}

/// One launch's arguments: a JSON array of strings on one line, at most [`MAX_MESSAGE`] bytes,
/// within the read deadline; answered with `ok`.
#[cfg(unix)]
fn read_args(stream: std::os::unix::net::UnixStream) -> std::io::Result<Vec<String>> {
    stream.set_read_timeout(Some(READ_DEADLINE))?;
    stream.set_write_timeout(Some(READ_DEADLINE))?;
    let mut line = Vec::new();
    BufReader::new((&stream).take(MAX_MESSAGE + 1)).read_until(b'\n', &mut line)?;
    if line.len() as u64 > MAX_MESSAGE {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, format!("over {MAX_MESSAGE} bytes")));
    }
    let args: Vec<String> = serde_json::from_slice(&line)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not a list of arguments: {e}")))?;
    let _ = (&stream).write_all(b"ok\n");
    Ok(args)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::sync::mpsc;

    fn first(dir: &Path) -> Primary {
        match claim(dir, &[]).unwrap() {
            Claim::First(p) => p,
            Claim::Handed => panic!("no app ran on {}, yet the claim was handed over", dir.display()),
        }
    }

    #[test]
    fn a_second_launch_hands_its_arguments_to_the_first_and_is_told_to_end() {
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = mpsc::channel();
        first(dir.path()).serve(move |args| tx.send(args).unwrap());
        let args = vec!["dcs-console".to_owned(), "dcs-console://device/imei:490154203237518".to_owned()];
        assert!(matches!(claim(dir.path(), &args).unwrap(), Claim::Handed));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), args);
        // And again: the first app goes on answering.
        assert!(matches!(claim(dir.path(), &args[..1]).unwrap(), Claim::Handed));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), args[..1].to_vec());
    }

    #[test]
    fn apps_on_two_data_folders_are_two_first_apps() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let _a = first(a.path());
        let _b = first(b.path());
    }

    /// A crash leaves the socket file behind but not the lock: the next launch is the first app,
    /// not one that waits for an answer that never comes.
    #[test]
    fn what_a_crashed_app_left_does_not_stop_the_next_one() {
        let dir = tempfile::tempdir().unwrap();
        drop(first(dir.path()));
        assert!(socket_path(dir.path()).exists(), "the socket file stays, as after a crash");
        let (tx, rx) = mpsc::channel();
        first(dir.path()).serve(move |args| tx.send(args).unwrap());
        assert!(matches!(claim(dir.path(), &["x".to_owned()]).unwrap(), Claim::Handed));
        assert_eq!(rx.recv_timeout(Duration::from_secs(5)).unwrap(), vec!["x".to_owned()]);
    }

    /// Anything may connect to the socket: a message too long, not a list of strings, or none at
    /// all is dropped, and the app goes on answering the launches after it.
    #[test]
    fn hostile_messages_are_dropped_and_the_app_goes_on_answering() {
        use std::os::unix::net::UnixStream;
        let dir = tempfile::tempdir().unwrap();
        let (tx, rx) = mpsc::channel();
        first(dir.path()).serve(move |args| tx.send(args).unwrap());
        let socket = socket_path(dir.path());
        let huge = vec![b'x'; MAX_MESSAGE as usize * 4];
        for message in [&huge[..], b"{\"not\": \"a list\"}\n", b"[1, 2]\n", b"[\"unterminated\n", b""] {
            let mut s = UnixStream::connect(&socket).unwrap();
            let _ = s.write_all(message);
            drop(s);
        }
        // A connection that says nothing and stays open holds the app no longer than the deadline.
        let _silent = UnixStream::connect(&socket).unwrap();
        let started = std::time::Instant::now();
        assert!(matches!(claim(dir.path(), &["after".to_owned()]).unwrap(), Claim::Handed));
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), vec!["after".to_owned()]);
        assert!(rx.try_recv().is_err(), "nothing else was taken for arguments");
        assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
    }

    #[test]
    fn a_socket_path_too_long_for_the_system_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let deep = dir.path().join("d".repeat(120));
        let e = claim(&deep, &[]).err().expect("refused");
        assert!(e.to_string().contains("too long"), "{e}");
    }
}
