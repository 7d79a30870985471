//! The standalone server's threads: one OS thread per core, each running a one-thread tokio
//! runtime with a listening socket of its own on the shared address (`SO_REUSEPORT`: the
//! kernel spreads the connections over the sockets). A connection lives on the thread that
//! accepted it, so answering its requests wakes no other thread: a multi-thread runtime's
//! worker, on waking for a request, wakes a second worker to look for more work, which
//! finds none and parks again; on a client that makes one call after another (boto3, the
//! aws CLI, an SDK on one task) that second wake is a good part of the server's CPU per call
//! (`provider/benches/workload.rs` measures it). Concurrent clients still use every core:
//! each connection's thread serves it while the others serve theirs.

use std::net::SocketAddr;
use std::thread::JoinHandle;

use tokio::sync::watch;

/// A server running on threads of its own until [`Threaded::stop`].
#[derive(Debug)]
pub struct Threaded {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    threads: Vec<JoinHandle<std::io::Result<()>>>,
}

/// How many threads serve when none is asked for: one per core the process may use.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

impl Threaded {
    /// Serves `app` on `addr` (port 0: one the system picks) on `threads` threads named
    /// `name`, each as [`crate::server::serve_app`] serves. Returns once every socket listens.
    pub fn start(
        addr: SocketAddr,
        app: axum::Router,
        threads: usize,
        name: &str,
    ) -> std::io::Result<Threaded> {
        // Only a system that shares a port between sockets gets more than one.
        let threads = if cfg!(unix) { threads.max(1) } else { 1 };
        let mut addr = addr;
        let mut sockets = Vec::with_capacity(threads);
        for _ in 0..threads {
            let socket = socket_for(addr)?;
            // The first binds the port (perhaps one the system picks); the rest share it.
            addr = socket.local_addr()?;
            sockets.push(socket);
        }
        let (stop, stopped) = watch::channel(false);
        let mut handles = Vec::with_capacity(threads);
        let mut listening = Vec::with_capacity(threads);
        for socket in sockets {
            let app = app.clone();
            let mut stopped = stopped.clone();
            let (ready, is_ready) = std::sync::mpsc::channel();
            listening.push(is_ready);
            let handle = std::thread::Builder::new().name(name.to_string()).spawn(
                move || -> std::io::Result<()> {
                    // The runtime, and the socket listening under it; either failing is told
                    // to `start`, which is waiting for every thread to listen.
                    let setup = || -> std::io::Result<_> {
                        let runtime = tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()?;
                        let listener = {
                            let _in_runtime = runtime.enter();
                            socket.listen(1024)?
                        };
                        Ok((runtime, listener))
                    };
                    let (runtime, listener) = match setup() {
                        Ok(set) => {
                            let _ = ready.send(Ok(()));
                            set
                        }
                        Err(e) => {
                            let kind = e.kind();
                            let _ = ready.send(Err(e));
                            return Err(kind.into());
                        }
                    };
                    let shutdown = async move {
                        let _ = stopped.wait_for(|stop| *stop).await;
                    };
                    runtime.block_on(crate::server::serve_app(listener, app, shutdown))
                },
            )?;
            handles.push(handle);
        }
        let server = Threaded {
            addr,
            stop,
            threads: handles,
        };
        for is_ready in listening {
            match is_ready.recv() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    let _ = server.stop();
                    return Err(e);
                }
                Err(_) => {
                    let _ = server.stop();
                    return Err(std::io::Error::other(
                        "a server thread ended before listening",
                    ));
                }
            }
        }
        Ok(server)
    }

    /// Serves `app` on `127.0.0.1`, at a port the system picks, on one thread per core named
    /// `name`: as the standalone server serves, for a benchmark.
    pub fn on_loopback(app: axum::Router, name: &str) -> std::io::Result<Threaded> {
        let loopback = SocketAddr::from(([127, 0, 0, 1], 0));
        Threaded::start(loopback, app, default_threads(), name)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops taking connections, lets the ones in flight finish their requests (up to 10 s,
    /// as [`crate::server::serve_app`] does) and waits for every thread to end.
    pub fn stop(self) -> std::io::Result<()> {
        let _ = self.stop.send(true);
        let mut result = Ok(());
        for thread in self.threads {
            match thread.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => result = Err(e),
                Err(_) => result = Err(std::io::Error::other("a server thread panicked")),
            }
        }
        result
    }
}

/// A TCP socket bound to `addr`, sharing its port with the server's other sockets.
fn socket_for(addr: SocketAddr) -> std::io::Result<tokio::net::TcpSocket> {
    let socket = match addr {
        SocketAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
        SocketAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
    };
    socket.set_reuseaddr(true)?;
    #[cfg(unix)]
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_thread_serves_and_stop_ends_them() {
        // Each answer names the thread that served it.
        let app =
            axum::Router::new().fallback(|| async { format!("{:?}", std::thread::current().id()) });
        let server = Threaded::start("127.0.0.1:0".parse().unwrap(), app, 2, "test-served")
            .expect("the server starts");
        assert_ne!(server.addr().port(), 0);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        // Many connections, so that both sockets (which the kernel picks by the connection's
        // address and port) take some; each is answered.
        let served_by = runtime.block_on(async {
            let mut served_by = std::collections::BTreeSet::new();
            for _ in 0..32 {
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
                stream
                    .write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
                    .await
                    .unwrap();
                let mut answer = String::new();
                stream.read_to_string(&mut answer).await.unwrap();
                assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
                let thread = answer.rsplit("\r\n").next().unwrap().to_string();
                assert!(thread.starts_with("ThreadId("), "{answer}");
                served_by.insert(thread);
            }
            served_by
        });
        // 32 connections all on one socket: one chance in 2^31.
        assert_eq!(served_by.len(), 2, "{served_by:?}");
        let addr = server.addr();
        server.stop().expect("every thread ends cleanly");
        // Nothing listens any more.
        assert!(std::net::TcpStream::connect(addr).is_err());
    }

    #[test]
    fn a_port_in_use_is_refused_without_sharing_it() {
        // A socket without SO_REUSEPORT holds the port: the server cannot share it.
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let app = axum::Router::new();
        let refused = Threaded::start(taken.local_addr().unwrap(), app, 2, "test-refused");
        assert!(refused.is_err());
    }
}
