//! Papers run at once in `reproduce`, and their cells share the run's `--jobs` places: never more cells compute
//! at a time than there are places, whichever paper they belong to, and the results keep the items' order.

use std::sync::atomic::{AtomicUsize, Ordering};

use xtask_lab::reproduce::{in_parallel, Ctx};

fn ctx(dir: &std::path::Path, jobs: usize, places: usize) -> Ctx {
    crate::common::quiet_ctx(dir, jobs, places, Vec::new())
}

#[test]
fn two_papers_at_once_never_compute_more_cells_than_the_run_has_places() {
    let dir = tempfile::tempdir().unwrap();
    // Each paper would run 3 cells at once alone; the run has 2 places for both.
    let run = ctx(dir.path(), 3, 2);
    let (now, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let cell = |&i: &u64| {
        let n = now.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(n, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(5));
        now.fetch_sub(1, Ordering::SeqCst);
        Ok(i * 10)
    };
    let items: Vec<u64> = (0..12).collect();
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| in_parallel(&run.for_paper(), "a", &items, |&i| i as f64, cell));
        let b = s.spawn(|| in_parallel(&run.for_paper(), "b", &items, |_| 1.0, cell));
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    let want: Vec<u64> = items.iter().map(|i| i * 10).collect();
    assert_eq!(
        a, want,
        "results in the items' order, whatever the schedule"
    );
    assert_eq!(b, want);
    assert!(
        most.load(Ordering::SeqCst) <= 2,
        "{} cells at once",
        most.load(Ordering::SeqCst)
    );
}

#[test]
fn a_cell_that_runs_cells_of_its_own_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = ctx(dir.path(), 1, 1);
    let nested = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        in_parallel(
            &run,
            "outer",
            &[1u8],
            |_| 1.0,
            |_| in_parallel(&run, "inner", &[2u8], |_| 1.0, |&x| Ok(x)),
        )
    }));
    // The inner call panics in the outer cell's worker (instead of waiting forever for the one place its own
    // caller holds), and the scope carries the panic out.
    assert!(nested.is_err());
}

#[test]
fn a_timed_cell_computes_alone() {
    let dir = tempfile::tempdir().unwrap();
    let run = ctx(dir.path(), 2, 2);
    let (now, most_beside_timed) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let items: Vec<u64> = (0..8).collect();
    std::thread::scope(|s| {
        s.spawn(|| {
            in_parallel(
                &run.for_paper(),
                "other paper",
                &items,
                |_| 1.0,
                |_| {
                    now.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(3));
                    now.fetch_sub(1, Ordering::SeqCst);
                    Ok(())
                },
            )
            .unwrap()
        });
        s.spawn(|| {
            let paper = run.for_paper();
            for k in 0..4 {
                let _: u64 = paper
                    .cells
                    .get(&format!("timed-{k}"), || {
                        let _alone = paper.cells.places().alone();
                        most_beside_timed.fetch_max(now.load(Ordering::SeqCst), Ordering::SeqCst);
                        std::thread::sleep(std::time::Duration::from_millis(3));
                        most_beside_timed.fetch_max(now.load(Ordering::SeqCst), Ordering::SeqCst);
                        Ok(k)
                    })
                    .unwrap();
            }
        });
    });
    assert_eq!(
        most_beside_timed.load(Ordering::SeqCst),
        0,
        "a cell computed beside a timed one"
    );
}
