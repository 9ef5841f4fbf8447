//! What the benches share: a criterion measurement of the calling thread's CPU time, and
//! the `main` that runs every bench twice, against each clock.
//!
//! Wall time on a shared 2-core machine swings with whatever else runs; the thread's CPU
//! time does not, so the shape benches report both (`cpu-…` groups are CPU time).

use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use nix::time::{ClockId, clock_gettime};

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), reported like wall time.
pub(crate) struct ThreadCpu;

impl ThreadCpu {
    fn now() -> Duration {
        let ts = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
            .expect("every Linux kernel tj supports has CLOCK_THREAD_CPUTIME_ID");
        Duration::new(ts.tv_sec().unsigned_abs(), ts.tv_nsec().unsigned_abs() as u32)
    }
}

impl Measurement for ThreadCpu {
    type Intermediate = Duration;
    type Value = Duration;

    fn start(&self) -> Duration {
        ThreadCpu::now()
    }

    fn end(&self, start: Duration) -> Duration {
        ThreadCpu::now().saturating_sub(start)
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    fn formatter(&self) -> &dyn ValueFormatter {
        // Values are nanoseconds, as for the wall clock: borrow its formatter.
        static WALL: WallTime = WallTime;
        WALL.formatter()
    }
}

/// The bench's `main`: each `fn(&mut Criterion<M>, prefix: &str)` listed runs against the
/// wall clock, then against the thread's CPU time with the prefix `cpu-`.
macro_rules! wall_and_cpu_main {
    ($($bench:ident),+ $(,)?) => {
        fn wall(c: &mut criterion::Criterion) {
            $($bench(c, "");)+
        }

        fn cpu(c: &mut criterion::Criterion<crate::common::ThreadCpu>) {
            $($bench(c, "cpu-");)+
        }

        criterion::criterion_group!(benches, wall);
        criterion::criterion_group! {
            name = benches_cpu;
            config = criterion::Criterion::default().with_measurement(crate::common::ThreadCpu);
            targets = cpu
        }
        criterion::criterion_main!(benches, benches_cpu);
    };
}
pub(crate) use wall_and_cpu_main;
