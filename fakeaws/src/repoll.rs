//! A connection's wakes during its own poll, served by polling it again at once.
//!
//! hyper hands a request's body to the handler through a channel, and taking the body out of
//! that channel wakes the channel's sender: the connection's own task, which is the one
//! reading it (hyper polls the handler inside the connection's poll). On tokio's multi-thread
//! runtime a task woken while it runs is queued again, and an idle worker is woken to steal
//! it: a futex wake and a thread switched in and out, for nothing, on every request with a
//! body, which is every Query request. The benchmarks measured it at about a fifth of the
//! server's CPU per call (`provider/benches/workload.rs`).
//!
//! [`repoll`] polls the connection again instead, at once, on the thread already running it.
//! A wake that comes while the connection is not being polled (a socket becoming readable, a
//! timer) goes to the task's waker as before. A connection that wakes itself on every poll
//! (hyper yields after a long run of pipelined requests) goes back to the scheduler after
//! [`MAX_REPOLLS`] polls in a row, so that it cannot keep its worker from other connections.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// The most times one poll of the task polls the connection again.
const MAX_REPOLLS: usize = 4;

/// Where a wake goes: noted, while the connection is being polled; otherwise to the task.
#[derive(Default)]
struct Wakes {
    /// The task's own waker, registered at each of its polls.
    task: AtomicWaker,
    /// Whether the connection is being polled now.
    polling: AtomicBool,
    /// Whether it was woken while being polled.
    woken: AtomicBool,
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.polling.load(Ordering::SeqCst) {
            self.woken.store(true, Ordering::SeqCst);
            // Still being polled: the poller sees `woken` when the poll ends and polls again.
            if self.polling.load(Ordering::SeqCst) {
                return;
            }
            // The poll ended meanwhile: whichever of the poller and this wake takes the flag
            // acts on it, so the wake is never lost.
            if !self.woken.swap(false, Ordering::SeqCst) {
                return;
            }
        }
        self.task.wake();
    }
}

/// Runs `connection`, serving the wakes it gives itself while it is being polled by polling
/// it again at once (see the module's docs).
pub(crate) async fn repoll<F: Future>(connection: F) -> F::Output {
    let mut connection = std::pin::pin!(connection);
    let wakes = Arc::new(Wakes::default());
    let waker = Waker::from(Arc::clone(&wakes));
    std::future::poll_fn(move |cx| {
        wakes.task.register(cx.waker());
        let mut inner = Context::from_waker(&waker);
        for _ in 0..=MAX_REPOLLS {
            wakes.polling.store(true, Ordering::SeqCst);
            let poll = connection.as_mut().poll(&mut inner);
            wakes.polling.store(false, Ordering::SeqCst);
            if poll.is_ready() {
                return poll;
            }
            if !wakes.woken.swap(false, Ordering::SeqCst) {
                return Poll::Pending;
            }
        }
        // Woken during every one of those polls: back to the scheduler, behind the others.
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A future that wakes itself during its first `self_wakes` polls, then is ready.
    struct SelfWaking {
        self_wakes: usize,
        polls: Arc<AtomicUsize>,
    }

    impl Future for SelfWaking {
        type Output = usize;
        fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            let n = self.polls.fetch_add(1, Ordering::SeqCst) + 1;
            if self.self_wakes == 0 {
                return Poll::Ready(n);
            }
            self.self_wakes -= 1;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    /// Counts the wakes the task itself gets.
    #[derive(Default)]
    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// One poll of `repoll` over a future that wakes itself during its first `self_wakes`
    /// polls: what the poll gave, how often the future was polled, how often the task was woken.
    fn poll_once(self_wakes: usize) -> (Poll<usize>, usize, usize) {
        let count = Arc::new(Count::default());
        let waker = Waker::from(Arc::clone(&count));
        let mut cx = Context::from_waker(&waker);
        let polls = Arc::new(AtomicUsize::new(0));
        let mut f = std::pin::pin!(repoll(SelfWaking {
            self_wakes,
            polls: Arc::clone(&polls),
        }));
        let poll = f.as_mut().poll(&mut cx);
        (
            poll,
            polls.load(Ordering::SeqCst),
            count.0.load(Ordering::SeqCst),
        )
    }

    #[test]
    fn a_wake_during_its_own_poll_is_a_poll_again_not_a_wake_of_the_task() {
        assert_eq!(poll_once(2), (Poll::Ready(3), 3, 0));
    }

    #[test]
    fn one_that_wakes_itself_every_time_goes_back_to_the_scheduler() {
        // Polled as often as allowed, then the task is woken to run again, behind the others.
        assert_eq!(poll_once(100), (Poll::Pending, MAX_REPOLLS + 1, 1));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wake_from_elsewhere_reaches_the_task() {
        // A channel's receiver, woken by a send from another task after it went pending.
        let (tx, mut rx) = tokio::sync::mpsc::channel::<u32>(1);
        let got = tokio::spawn(repoll(async move { rx.recv().await }));
        tokio::task::yield_now().await;
        tx.send(7).await.unwrap();
        assert_eq!(got.await.unwrap(), Some(7));
    }

    #[test]
    fn no_wake_is_lost_when_wakes_race_the_polls() {
        // Another thread wakes the connection at random moments while the runtime polls it;
        // the connection is a counter it waits on. It must see every value through.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (tx, mut rx) = tokio::sync::watch::channel(0u32);
        let task = rt.spawn(repoll(async move {
            loop {
                if *rx.borrow_and_update() == 10_000 {
                    return;
                }
                if rx.changed().await.is_err() {
                    return;
                }
            }
        }));
        let sender = std::thread::spawn(move || {
            for i in 1..=10_000 {
                tx.send_replace(i);
            }
            tx
        });
        rt.block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(60), task)
                .await
                .unwrap()
                .unwrap();
        });
        drop(sender.join().unwrap());
    }
}
