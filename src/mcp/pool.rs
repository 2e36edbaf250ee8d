//! The MCP server's workers: tool calls and resource reads run here, at most
//! [`WORKERS`] at once, the rest queued in arrival order.
//!
//! Owns: the worker threads, the queue and its bounds, and each call's cancel flag.
//! Invariants: never more than `WORKERS` threads however many calls arrive or however
//! slowly the client reads; a call that does not fit the queue is refused at once (the
//! caller answers it), never dropped; a cancelled call's flag is seen by its wait (the
//! domain's `Progress` answers `false`) and the server sends no answer for it; once
//! `close` is called the queue takes nothing and queued calls are dropped unanswered.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Calls running at once: enough for a client's parallel reads beside a few long runs.
pub const WORKERS: usize = 16;
/// Calls waiting for a worker.
pub const QUEUED: usize = 64;
/// Bytes of request text waiting (a call holds its arguments until it runs).
pub const QUEUED_BYTES: usize = 64 << 20;

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    queue: VecDeque<(usize, Job)>,
    queued_bytes: usize,
    workers: usize,
    idle: usize,
    running: usize,
    closed: bool,
    /// The cancel flag of each call not yet answered, by its JSON-RPC id (as JSON text).
    flags: HashMap<String, Arc<AtomicBool>>,
}

#[derive(Default)]
pub struct Pool {
    state: Mutex<State>,
    /// Signalled when a job is queued or the pool closes (workers wait on it).
    work: Condvar,
    /// Signalled when a job ends (the drain waits on it).
    ended: Condvar,
}

/// Why a call was not queued.
pub enum Refused {
    Full { running: usize, queued: usize },
    Closed,
}

impl Pool {
    /// Queue `job` for the call `id`; its cancel flag is returned to the job's maker
    /// through `make`, so the job can pass it to its wait.
    pub fn submit(
        self: &Arc<Self>,
        id: &str,
        bytes: usize,
        make: impl FnOnce(Arc<AtomicBool>) -> Job,
    ) -> Result<(), Refused> {
        let Ok(mut st) = self.state.lock() else {
            return Err(Refused::Closed);
        };
        if st.closed {
            return Err(Refused::Closed);
        }
        if st.queue.len() >= QUEUED
            || (!st.queue.is_empty() && st.queued_bytes + bytes > QUEUED_BYTES)
        {
            return Err(Refused::Full {
                running: st.running,
                queued: st.queue.len(),
            });
        }
        let flag = Arc::new(AtomicBool::new(false));
        st.flags.insert(id.to_string(), Arc::clone(&flag));
        st.queue.push_back((bytes, make(flag)));
        st.queued_bytes += bytes;
        if st.idle == 0 && st.workers < WORKERS {
            st.workers += 1;
            let me = Arc::clone(self);
            let spawned = std::thread::Builder::new()
                .name("mcp-call".into())
                .spawn(move || me.work_loop());
            if spawned.is_err() {
                // The calls queued still run on the workers there are; with none, the
                // next submit tries again.
                st.workers -= 1;
            }
        }
        drop(st);
        self.work.notify_one();
        Ok(())
    }

    fn work_loop(self: Arc<Self>) {
        let Ok(mut st) = self.state.lock() else {
            return;
        };
        loop {
            if let Some((bytes, job)) = st.queue.pop_front() {
                st.queued_bytes -= bytes;
                st.running += 1;
                drop(st);
                job();
                let Ok(s) = self.state.lock() else {
                    return;
                };
                st = s;
                st.running -= 1;
                self.ended.notify_all();
                continue;
            }
            if st.closed {
                st.workers -= 1;
                return;
            }
            st.idle += 1;
            st = match self.work.wait(st) {
                Ok(s) => s,
                Err(_) => return,
            };
            st.idle -= 1;
        }
    }

    /// Mark the call `id` cancelled; true when it was still unanswered.
    pub fn cancel(&self, id: &str) -> bool {
        let flag = self
            .state
            .lock()
            .ok()
            .and_then(|st| st.flags.get(id).cloned());
        match flag {
            Some(f) => {
                f.store(true, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    /// The call `id` is answering: forget its flag, and tell whether it was cancelled
    /// (then it must not answer).
    pub fn finish(&self, id: &str, flag: &AtomicBool) -> bool {
        if let Ok(mut st) = self.state.lock()
            && st
                .flags
                .get(id)
                .is_some_and(|f| std::ptr::eq(f.as_ref(), flag))
        {
            st.flags.remove(id);
        }
        flag.load(Ordering::SeqCst)
    }

    /// Wait until no call runs or waits, at most `limit`; true when none does.
    pub fn wait_idle(&self, limit: Duration) -> bool {
        let until = Instant::now() + limit;
        let Ok(mut st) = self.state.lock() else {
            return false;
        };
        while st.running > 0 || !st.queue.is_empty() {
            let now = Instant::now();
            if now >= until {
                return false;
            }
            st = match self.ended.wait_timeout(st, until - now) {
                Ok((s, _)) => s,
                Err(_) => return false,
            };
        }
        true
    }

    /// Take no more calls, drop the queued ones unanswered and cancel the running ones.
    pub fn close(&self) {
        if let Ok(mut st) = self.state.lock() {
            st.closed = true;
            st.queue.clear();
            st.queued_bytes = 0;
            for f in st.flags.values() {
                f.store(true, Ordering::SeqCst);
            }
        }
        self.work.notify_all();
        self.ended.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn never_more_workers_than_the_bound_and_a_full_queue_refuses() {
        let pool = Arc::new(Pool::default());
        let gate = Arc::new((Mutex::new(false), Condvar::new()));
        let peak = Arc::new(AtomicUsize::new(0));
        let now = Arc::new(AtomicUsize::new(0));
        let mut refused = 0;
        for i in 0..(WORKERS + QUEUED + 10) {
            let (gate, peak, now) = (gate.clone(), peak.clone(), now.clone());
            let r = pool.submit(&i.to_string(), 10, move |_| {
                Box::new(move || {
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(n, Ordering::SeqCst);
                    let (m, cv) = &*gate;
                    let mut open = m.lock().unwrap();
                    while !*open {
                        open = cv.wait(open).unwrap();
                    }
                    now.fetch_sub(1, Ordering::SeqCst);
                })
            });
            if let Err(Refused::Full { .. }) = r {
                refused += 1;
            }
        }
        // Workers pick jobs up as they start: at least the overflow is refused.
        assert!(refused >= 10, "refused {refused}");
        assert!(!pool.wait_idle(Duration::from_millis(50)));
        *gate.0.lock().unwrap() = true;
        gate.1.notify_all();
        assert!(pool.wait_idle(Duration::from_secs(30)));
        assert!(peak.load(Ordering::SeqCst) <= WORKERS);
        assert!(pool.state.lock().unwrap().workers <= WORKERS);
    }

    #[test]
    fn a_cancelled_call_sees_its_flag_and_is_not_answered() {
        let pool = Arc::new(Pool::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let p2 = Arc::clone(&pool);
        assert!(
            pool.submit("7", 1, move |flag| {
                Box::new(move || {
                    let until = Instant::now() + Duration::from_secs(30);
                    while !flag.load(Ordering::SeqCst) && Instant::now() < until {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    tx.send(p2.finish("7", &flag)).unwrap();
                })
            })
            .is_ok()
        );
        assert!(pool.cancel("7"));
        assert!(rx.recv_timeout(Duration::from_secs(30)).unwrap());
        assert!(!pool.cancel("7"), "an answered call is forgotten");
    }

    #[test]
    fn close_cancels_what_runs_and_takes_nothing_more() {
        let pool = Arc::new(Pool::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let (began, running) = std::sync::mpsc::channel();
        assert!(
            pool.submit("1", 1, move |flag| {
                Box::new(move || {
                    began.send(()).unwrap();
                    while !flag.load(Ordering::SeqCst) {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    tx.send(()).unwrap();
                })
            })
            .is_ok()
        );
        running.recv_timeout(Duration::from_secs(30)).unwrap();
        pool.close();
        rx.recv_timeout(Duration::from_secs(30)).unwrap();
        assert!(matches!(
            pool.submit("2", 1, |_| Box::new(|| {})),
            Err(Refused::Closed)
        ));
        assert!(pool.wait_idle(Duration::from_secs(30)));
    }
}
