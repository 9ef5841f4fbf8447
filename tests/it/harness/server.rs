//! A fake model server on 127.0.0.1: just enough HTTP/1.1 and server-sent events for a real
//! harness CLI to believe it talks to its model, and a record of every request it made.
//!
//! Each connection serves one request and is closed (`Connection: close`), so no client waits
//! on a kept-alive socket. What to answer is the caller's `respond` function; the server only
//! speaks HTTP.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// One request the harness made.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub(crate) method: String,
    /// The request target as sent, query included (`/v1/messages?beta=true`).
    pub(crate) target: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Request {
    pub(crate) fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The body as JSON, or `Null` when it is not JSON.
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_default()
    }

    /// One line for a failure message.
    pub(crate) fn summary(&self) -> String {
        format!("{} {} ({} bytes)", self.method, self.target, self.body.len())
    }
}

/// An answer: status, content type, body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) content_type: &'static str,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn json(value: &serde_json::Value) -> Reply {
        Reply {
            status: 200,
            content_type: "application/json",
            body: value.to_string().into_bytes(),
        }
    }

    /// A server-sent event stream: one `event:`/`data:` record per `(type, data)`.
    pub(crate) fn sse(events: &[(&str, serde_json::Value)]) -> Reply {
        let mut body = String::new();
        for (kind, data) in events {
            body.push_str(&format!("event: {kind}\ndata: {data}\n\n"));
        }
        Reply { status: 200, content_type: "text/event-stream", body: body.into_bytes() }
    }

    pub(crate) fn empty(status: u16) -> Reply {
        Reply { status, content_type: "application/json", body: b"{}".to_vec() }
    }
}

type Respond = dyn Fn(&Request) -> Reply + Send + Sync;

/// The server: listening from `start` until dropped.
pub(crate) struct FakeModel {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    stop: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

/// How long a connection may stay silent before its thread gives up on it.
const IDLE: Duration = Duration::from_secs(20);
/// The largest request the server reads (a harness's request carries its whole prompt).
const MAX_BODY: usize = 64 << 20;

impl FakeModel {
    /// Listens on a port the OS picks on 127.0.0.1 and answers every request with `respond`.
    pub(crate) fn start(respond: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> FakeModel {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        // Non-blocking accept so the thread can see `stop`; connections themselves block.
        listener.set_nonblocking(true).unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let respond: Arc<Respond> = Arc::new(respond);
        let acceptor = {
            let (requests, stop) = (requests.clone(), stop.clone());
            std::thread::spawn(move || accept_until_stopped(&listener, &requests, &stop, &respond))
        };
        FakeModel { addr, requests, stop, acceptor: Some(acceptor) }
    }

    /// `http://127.0.0.1:PORT`
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, in order.
    pub(crate) fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }

    /// The requests, one line each, for a failure message.
    pub(crate) fn log(&self) -> String {
        self.requests().iter().map(|r| format!("  {}\n", r.summary())).collect()
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.acceptor.take() {
            let _ = thread.join();
        }
    }
}

fn accept_until_stopped(
    listener: &TcpListener,
    requests: &Arc<Mutex<Vec<Request>>>,
    stop: &AtomicBool,
    respond: &Arc<Respond>,
) {
    let mut connections = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
                let (requests, respond) = (requests.clone(), respond.clone());
                connections.push(std::thread::spawn(move || {
                    serve(&stream, &requests, &*respond);
                }));
            }
            // Polling for `stop`, not synchronising: a connection is what is waited for.
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    // The harness is gone by now, so every connection has ended or ends at its idle bound.
    for connection in connections {
        let _ = connection.join();
    }
}

/// Reads one request from `stream`, records it, answers it and closes the connection.
fn serve(stream: &TcpStream, requests: &Mutex<Vec<Request>>, respond: &Respond) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(IDLE));
    let _ = stream.set_write_timeout(Some(IDLE));
    let mut reader = BufReader::new(stream);
    let Some(request) = read_request(&mut reader) else { return };
    requests.lock().unwrap().push(request.clone());
    let reply = respond(&request);
    let mut out = stream;
    let head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n",
        reply.status,
        if reply.status < 400 { "OK" } else { "Error" },
        reply.content_type,
        reply.body.len(),
    );
    let _ = out.write_all(head.as_bytes());
    if request.method != "HEAD" {
        let _ = out.write_all(&reply.body);
    }
    let _ = out.flush();
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

/// Parses the request line, headers and body (`Content-Length` or chunked); `None` when the
/// client closed or sent something that is not HTTP/1.1.
fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, target) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_string(), value.trim().to_string()));
    }
    let mut request = Request { method, target, headers, body: Vec::new() };
    if request.header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        request.body = read_chunked(reader)?;
    } else if let Some(len) = request.header("content-length") {
        let len: usize = len.parse().ok()?;
        if len > MAX_BODY {
            return None;
        }
        request.body = vec![0; len];
        reader.read_exact(&mut request.body).ok()?;
    }
    Some(request)
}

fn read_chunked(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).ok()?;
        let size = size.trim().split(';').next()?;
        let size = usize::from_str_radix(size, 16).ok()?;
        if size == 0 || body.len() + size > MAX_BODY {
            // Trailers (none expected) end with an empty line.
            loop {
                let mut trailer = String::new();
                if reader.read_line(&mut trailer).ok()? == 0 || trailer.trim().is_empty() {
                    break;
                }
            }
            return (size == 0).then_some(body);
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).ok()?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf).ok()?;
    }
}
