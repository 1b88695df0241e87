//! Server-Sent Events framing: one JSON document per `data:` line, `id:` carrying the event's
//! sequence number within its task (so `Last-Event-ID` can resume), and `: keep-alive`
//! comments while a stream is idle, so proxies do not time it out.

use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use futures::stream::{BoxStream, Stream, StreamExt};

/// The default interval between keep-alive comments.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Frame one event. `json` must be a single line (serde_json's compact output is).
///
/// ```
/// let frame = a2a_kit::binding::sse::frame(Some(3), br#"{"a":1}"#);
/// assert_eq!(&frame[..], b"id: 3\ndata: {\"a\":1}\n\n");
/// ```
pub fn frame(id: Option<u64>, json: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(json.len() + 32);
    if let Some(id) = id {
        b.put_slice(b"id: ");
        b.put_slice(id.to_string().as_bytes());
        b.put_u8(b'\n');
    }
    b.put_slice(b"data: ");
    b.put_slice(json);
    b.put_slice(b"\n\n");
    b.freeze()
}

/// Interleave `: keep-alive` comments into a framed stream whenever it is idle for `every`.
pub fn with_keep_alive(
    frames: impl Stream<Item = Bytes> + Send + 'static,
    every: Duration,
) -> BoxStream<'static, Bytes> {
    let mut frames = Box::pin(frames);
    Box::pin(async_stream::stream! {
        let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                next = frames.next() => match next {
                    Some(b) => { ticker.reset(); yield b; }
                    None => return,
                },
                _ = ticker.tick() => yield Bytes::from_static(b": keep-alive\n\n"),
            }
        }
    })
}

/// A stream's events as SSE frames with keep-alives: `event` encodes each one; an error ends
/// the stream after its frame (`error` encodes it).
pub(super) fn event_frames(
    events: crate::server::EventStream,
    event: impl Fn(&crate::server::StreamItem) -> Result<Bytes, crate::error::A2aError> + Send + 'static,
    error: impl Fn(&crate::error::A2aError) -> Bytes + Send + 'static,
) -> BoxStream<'static, Bytes> {
    let frames = events.scan(false, move |done, item| {
        if *done {
            return futures::future::ready(None);
        }
        let frame = match item.and_then(|item| Ok((item.seq, event(&item)?))) {
            Ok((seq, json)) => frame(seq, &json),
            Err(e) => {
                *done = true;
                frame(None, &error(&e))
            }
        };
        futures::future::ready(Some(frame))
    });
    with_keep_alive(frames, KEEP_ALIVE)
}

/// Parse a `Last-Event-ID` header value.
pub fn parse_last_event_id(value: &str) -> Result<u64, crate::error::A2aError> {
    value.trim().parse().map_err(|_| {
        crate::error::A2aError::invalid_field(
            "Last-Event-ID",
            format!("`{value}` is not an event id this server issued (a sequence number)"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keep_alive_comments_fill_idle_gaps() {
        let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(4);
        let frames = tokio_stream_from(rx);
        let mut out = with_keep_alive(frames, Duration::from_millis(20));
        tx.send(frame(Some(1), b"{}")).await.unwrap();
        assert_eq!(&out.next().await.unwrap()[..], b"id: 1\ndata: {}\n\n");
        // Nothing for an interval: a comment.
        assert_eq!(&out.next().await.unwrap()[..], b": keep-alive\n\n");
        tx.send(frame(None, b"[]")).await.unwrap();
        assert_eq!(&out.next().await.unwrap()[..], b"data: []\n\n");
        drop(tx);
        assert!(
            out.next().await.is_none(),
            "the stream ends with its source"
        );
    }

    fn tokio_stream_from(
        mut rx: tokio::sync::mpsc::Receiver<Bytes>,
    ) -> impl Stream<Item = Bytes> + Send + 'static {
        async_stream::stream! {
            while let Some(b) = rx.recv().await {
                yield b;
            }
        }
    }
}
