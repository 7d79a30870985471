//! The HTTP layer's own refusal of a request head, answered in the service's error shape.
//!
//! hyper refuses a request head it will not take (more header fields than it parses, or more
//! bytes than it buffers) before any handler sees the request: it writes a bare `431` with no
//! body and closes the connection. An SDK reading that gets no error code to act on, so
//! [`Shaped`] sits between hyper and the socket and writes, in its place, the answer the
//! service gives: `RequestHeaderSectionTooLarge`, in EC2's or ELB's XML error envelope, whichever
//! service the connection's requests are signed for.
//!
//! Doing this at the socket, rather than raising hyper's limits so that every head reaches
//! the handler, keeps hyper's header table on the stack: a limit above hyper's default (100
//! fields) makes it allocate and fill two tables of that many entries for every request,
//! which the workload benchmark measured at about 5 µs of server CPU per call.
//!
//! What is watched:
//! - what the client sends, for the service of its credential scope (`.../ec2/aws4_request`
//!   or `.../elasticloadbalancing/aws4_request`): one substring search per read;
//! - what hyper writes, for its refusal: a write that is a `431` head alone, with an empty body
//!   and no content type. No answer of the fake's own is that: each carries its XML and
//!   `text/xml`. Nor can any part of one look like it, when a socket takes an answer in
//!   pieces: a head ends in CR LF CR LF, and no answer body of the fake's holds a carriage
//!   return (the XML writer writes one as `&#13;`, JSON as `\r`).

use std::io;
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use memchr::memmem;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::ids::IdGen;
use crate::protocol::error::{ApiError, Common};
use crate::server::{MAX_HEADER_BYTES, MAX_HEADERS, Service, answer_error};

/// The end of every SigV4 credential scope, in an `Authorization` header or a presigned
/// query string (where the slashes may be written `%2F`, and are then not recognized: such a
/// request's refusal takes EC2's shape).
static SCOPE_END: LazyLock<memmem::Finder<'static>> =
    LazyLock::new(|| memmem::Finder::new(b"/aws4_request"));

/// What starts hyper's refusal of an over-size head.
const REFUSAL: &[u8] = b"HTTP/1.1 431 ";

/// A connection's socket, with hyper's refusals rewritten (see the module's documentation).
#[derive(Debug)]
pub struct Shaped<T> {
    io: T,
    /// The service of the latest credential scope read on this connection.
    service: Option<Service>,
    /// Request ids for the refusals, seeded by the connection's number.
    ids: IdGen,
    /// A refusal being written in place of hyper's.
    pending: Option<Pending>,
}

/// The bytes written in place of hyper's, and how many of hyper's they stand for.
#[derive(Debug)]
struct Pending {
    bytes: Vec<u8>,
    written: usize,
    replaces: usize,
}

impl<T> Shaped<T> {
    /// `io`, the `connection`-th of its server.
    pub fn new(io: T, connection: u64) -> Self {
        Shaped {
            io,
            service: None,
            ids: IdGen::new(connection, "refusal"),
            pending: None,
        }
    }

    /// Notes the service of each credential scope in `read`.
    fn note_scopes(&mut self, read: &[u8]) {
        for at in SCOPE_END.find_iter(read) {
            let before = read.get(..at).unwrap_or_default();
            let named = before.rsplit(|b| *b == b'/').next().unwrap_or_default();
            if let Some(service) = std::str::from_utf8(named).ok().and_then(Service::from_name) {
                self.service = Some(service);
            }
        }
    }

    /// The answer to write instead of `written`, when `written` is hyper's refusal: the same
    /// status and date, the service's error in its XML envelope.
    fn replacement(&mut self, written: &[u8]) -> Option<Vec<u8>> {
        if !written.starts_with(REFUSAL) {
            return None;
        }
        let end = memmem::find(written, b"\r\n\r\n")?;
        // Nothing after the head: hyper's refusal has no body.
        if end + 4 != written.len() {
            return None;
        }
        let mut lines = written
            .get(..end)?
            .split(|b| *b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
        let status = lines.next()?;
        let named = |line: &[u8], name: &[u8]| {
            line.get(..name.len())
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
        };
        let mut kept = Vec::new();
        for line in lines {
            if named(line, b"content-type:") {
                // An answer of the handler's own.
                return None;
            }
            if named(line, b"content-length:") {
                if line.get(15..).is_some_and(|v| v.trim_ascii() != b"0") {
                    return None;
                }
            } else if !named(line, b"connection:") {
                kept.push(line);
            }
        }
        let err = ApiError::new(
            Common::RequestHeaderSectionTooLarge,
            format!(
                "The request's headers are more than this endpoint takes: at most \
                 {MAX_HEADER_BYTES} bytes in {MAX_HEADERS} fields."
            ),
        );
        let answer = answer_error(&err, self.service, self.ids.request_id());
        let (body, request_id) = (answer.body, answer.request_id);
        let mut out = Vec::with_capacity(end + body.len() + 160);
        for line in std::iter::once(status).chain(kept) {
            out.extend_from_slice(line);
            out.extend_from_slice(b"\r\n");
        }
        for line in [
            "content-type: text/xml;charset=UTF-8".to_string(),
            format!("content-length: {}", body.len()),
            format!("x-amzn-requestid: {request_id}"),
            "connection: close".to_string(),
            String::new(),
        ] {
            out.extend_from_slice(line.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(body.as_bytes());
        Some(out)
    }
}

impl<T: AsyncWrite + Unpin> Shaped<T> {
    /// Whether `written` is to be replaced: a refusal is being written in its place, or
    /// `written` is hyper's refusal, whose replacement is then set to be written.
    fn intercept(&mut self, written: &[u8]) -> bool {
        if self.pending.is_none()
            && let Some(bytes) = self.replacement(written)
        {
            self.pending = Some(Pending {
                bytes,
                written: 0,
                replaces: written.len(),
            });
        }
        self.pending.is_some()
    }

    /// Writes what is left of the refusal; ready with the count of hyper's bytes it stands
    /// for once all of it is written.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let Some(p) = &mut self.pending else {
            return Poll::Ready(Ok(0));
        };
        while let Some(rest) = p.bytes.get(p.written..).filter(|r| !r.is_empty()) {
            match Pin::new(&mut self.io).poll_write(cx, rest) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => p.written += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        let replaces = p.replaces;
        self.pending = None;
        Poll::Ready(Ok(replaces))
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Shaped<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = read {
            let new = buf.filled().get(before..).unwrap_or_default();
            self.note_scopes(new);
        }
        read
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Shaped<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if !this.intercept(buf) {
            return Pin::new(&mut this.io).poll_write(cx, buf);
        }
        this.poll_pending(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        // hyper's refusal is a head alone, in one buffer.
        let mut written = bufs.iter().filter(|b| !b.is_empty());
        let intercepted = match (written.next(), written.next()) {
            (Some(only), None) => this.intercept(only),
            _ => this.pending.is_some(),
        };
        if !intercepted {
            return Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        }
        this.poll_pending(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.poll_pending(cx))?;
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// What hyper 1 writes when it refuses a head.
    const HYPERS: &[u8] = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\
                            date: Thu, 03 Dec 2026 00:00:00 GMT\r\n\r\n";

    fn signed_for(service: &str) -> Vec<u8> {
        format!(
            "POST / HTTP/1.1\r\nAuthorization: AWS4-HMAC-SHA256 \
             Credential=AKID/20261203/us-east-1/{service}/aws4_request, SignedHeaders=host, \
             Signature=0\r\n"
        )
        .into_bytes()
    }

    /// Sends `request` through a `Shaped` socket, has it write each of `writes` (vectored or
    /// not), and returns what the client reads back.
    async fn exchange(request: &[u8], writes: &[&[u8]], vectored: bool) -> String {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let mut shaped = Shaped::new(server, 1);
        client.write_all(request).await.unwrap();
        let mut seen = vec![0; request.len()];
        shaped.read_exact(&mut seen).await.unwrap();
        assert_eq!(seen, request);
        for w in writes {
            let mut rest: &[u8] = w;
            while !rest.is_empty() {
                let n = if vectored {
                    let bufs = [io::IoSlice::new(&[]), io::IoSlice::new(rest)];
                    shaped.write_vectored(&bufs).await.unwrap()
                } else {
                    shaped.write(rest).await.unwrap()
                };
                rest = rest.get(n..).unwrap();
            }
        }
        shaped.shutdown().await.unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn hypers_refusal_is_answered_in_the_shape_of_the_service_signed_for() {
        for vectored in [false, true] {
            let ec2 = exchange(&signed_for("ec2"), &[HYPERS], vectored).await;
            let elb = exchange(&signed_for("elasticloadbalancing"), &[HYPERS], vectored).await;
            let unsigned = exchange(b"POST / HTTP/1.1\r\nX-A: b\r\n", &[HYPERS], vectored).await;
            for (answer, root) in [
                (
                    &ec2,
                    "<Response><Errors><Error><Code>RequestHeaderSectionTooLarge</Code>",
                ),
                (
                    &elb,
                    "<ErrorResponse xmlns=\"http://elasticloadbalancing.amazonaws.com/",
                ),
                (&unsigned, "<Response><Errors>"),
            ] {
                let (head, body) = answer.split_once("\r\n\r\n").unwrap();
                assert!(head.starts_with("HTTP/1.1 431 "), "{answer}");
                assert!(
                    head.contains("\r\ndate: Thu, 03 Dec 2026 00:00:00 GMT"),
                    "{head}"
                );
                assert!(head.contains("\r\ncontent-type: text/xml"), "{head}");
                assert!(
                    head.contains(&format!("\r\ncontent-length: {}", body.len())),
                    "{head}"
                );
                assert!(head.contains("\r\nconnection: close"), "{head}");
                assert!(body.contains(root), "{body}");
                assert!(body.contains("RequestHeaderSectionTooLarge"), "{body}");
            }
        }
    }

    #[tokio::test]
    async fn every_other_answer_passes_as_it_is() {
        let own_431 = b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/xml\r\n\
                        content-length: 0\r\n\r\n";
        let answered = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";
        let with_body =
            b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 2\r\n\r\nhi";
        for writes in [&[&own_431[..]][..], &[&answered[..]], &[&with_body[..]]] {
            for vectored in [false, true] {
                let answer = exchange(&signed_for("ec2"), writes, vectored).await;
                assert_eq!(answer.as_bytes(), writes.concat(), "{answer}");
            }
        }
    }

    #[test]
    fn the_latest_scope_read_names_the_service() {
        let mut shaped = Shaped::new((), 1);
        shaped.note_scopes(b"Credential=A/D/r/ec2/aws4_request, ");
        assert!(matches!(shaped.service, Some(Service::Ec2)));
        shaped.note_scopes(b"x/elasticloadbalancing/aws4_request y/sts/aws4_request");
        assert!(matches!(shaped.service, Some(Service::Elb)));
        shaped.note_scopes(b"no scope here");
        assert!(matches!(shaped.service, Some(Service::Elb)));
    }
}
