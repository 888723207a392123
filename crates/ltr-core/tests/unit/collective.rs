use ltr_core::*;
use ltr_data::ExactVec;

/// The maximum over ranks of non-negative values: −0 is +0, +∞ and NaN win.
#[test]
fn nonnegative_maxima_over_ranks() {
    let local = |rank: usize| match rank {
        0 => [0.5, -0.0, 1.0, 0.0],
        1 => [3.0, 0.0, f64::INFINITY, f64::NAN],
        _ => [2.0, 0.25, 7.0, 1.0],
    };
    for ranks in [2, 3] {
        for r in ThreadGroup::run(ranks, |comm| {
            let mut v = local(comm.rank());
            comm.max_nonnegative_f64(&mut v)?;
            Ok(v)
        }) {
            let v = r.unwrap();
            let zero = if ranks == 2 { 0.0 } else { 0.25 };
            assert_eq!(v[0], 3.0);
            assert_eq!(v[1].to_bits(), f64::to_bits(zero));
            assert_eq!(v[2], f64::INFINITY);
            assert!(v[3].is_nan());
        }
    }
}

#[test]
fn long_ordered_sums_are_reduced_in_parts_with_the_bits_of_one_gather() {
    // Rounding makes the order visible: 1e16 + 1 − 1e16 is 0 added in rank order, 1 in any other.
    let value =
        |rank: usize, i: usize| [1e16, 1.0 + i as f64, -1e16][rank] * (1.0 + (i % 7) as f64);
    for ranks in [2, 3] {
        let n = 1000;
        let results = ThreadGroup::run(ranks, |comm| {
            let mut buf: Vec<f64> = (0..n).map(|i| value(comm.rank(), i)).collect();
            comm.sum_ordered(&mut buf)?;
            Ok(buf)
        });
        let want: Vec<u64> = (0..n)
            .map(|i| (0..ranks).map(|r| value(r, i)).sum::<f64>().to_bits())
            .collect();
        for r in results {
            let buf = r.unwrap();
            assert_eq!(buf.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), want);
        }
    }
    // Uneven parts, one of them empty.
    let results = ThreadGroup::run(3, |comm| {
        let counts = [2, 0, 3];
        let local: Vec<f64> = (0..5).map(|i| (10 * comm.rank() + i) as f64).collect();
        let exchanged = comm.exchange_parts_f64(&local, &counts)?;
        let part: Vec<f64> = (0..counts[comm.rank()])
            .map(|i| (100 * comm.rank() + i) as f64)
            .collect();
        let whole = comm.gather_parts_f64(&part, &counts)?;
        Ok((exchanged, whole))
    });
    let expected_exchange = [
        vec![0.0, 1.0, 10.0, 11.0, 20.0, 21.0],
        vec![],
        vec![2.0, 3.0, 4.0, 12.0, 13.0, 14.0, 22.0, 23.0, 24.0],
    ];
    for (rank, r) in results.into_iter().enumerate() {
        let (exchanged, whole) = r.unwrap();
        assert_eq!(exchanged, expected_exchange[rank]);
        assert_eq!(whole, vec![0.0, 1.0, 200.0, 201.0, 202.0]);
    }
    // Parts that do not cut the buffer are an error, not a wrong answer.
    let bad = ThreadGroup::run(2, |comm| comm.exchange_parts_f64(&[1.0, 2.0], &[1, 2]));
    assert!(bad
        .iter()
        .all(|r| r.as_ref().unwrap_err().to_string().contains("do not cut")));
}

#[test]
fn thread_ranks_sum_exactly_and_in_rank_order() {
    let results = ThreadGroup::run(3, |comm| {
        let r = comm.rank() as f64;
        let mut acc = ExactVec::new(2);
        acc.add_all(&[1e16 * (r - 1.0), 0.5 + r]);
        comm.sum_exact(&mut acc)?;
        let mut ordered = [r, 10.0 * r];
        comm.sum_ordered(&mut ordered)?;
        // A second round reuses the slots.
        let gathered = comm.gather_f64(&[r])?;
        // Rank r sends r + 1 values (r, r, …); NaN and infinities cross unchanged.
        let mut own = vec![r; comm.rank() + 1];
        own[0] = [f64::NAN, f64::INFINITY, -0.0][comm.rank()];
        let varying = comm.gather_varying_f64(&own)?;
        Ok((acc.values(), ordered, gathered, varying))
    });
    for r in results {
        let (exact, ordered, gathered, varying) = r.unwrap();
        assert_eq!(exact, vec![0.0, 4.5]);
        assert_eq!(ordered, [3.0, 30.0]);
        assert_eq!(gathered, vec![0.0, 1.0, 2.0]);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(varying.len(), 3);
        assert_eq!(bits(&varying[0]), bits(&[f64::NAN]));
        assert_eq!(varying[1], vec![f64::INFINITY, 1.0]);
        assert_eq!(bits(&varying[2]), bits(&[-0.0, 2.0, 2.0]));
    }
}

#[test]
fn a_failing_rank_stops_the_others_instead_of_hanging() {
    let results = ThreadGroup::run(3, |comm| {
        if comm.rank() == 1 {
            return Err(LtrError::Training("shard.txt line 3: no qid".into()));
        }
        let mut acc = ExactVec::new(1);
        for _ in 0..5 {
            comm.sum_exact(&mut acc)?;
        }
        Ok(())
    });
    assert!(results[1].is_err());
    for r in [&results[0], &results[2]] {
        let e = r.as_ref().unwrap_err().to_string();
        assert!(e.contains("rank 1 failed") && e.contains("line 3"), "{e}");
    }
    let panicked = ThreadGroup::run(2, |comm| {
        if comm.rank() == 0 {
            panic!("boom");
        }
        comm.gather_f64(&[1.0]).map(|_| ())
    });
    assert!(panicked[1]
        .as_ref()
        .unwrap_err()
        .to_string()
        .contains("rank 0 panicked"));
}

#[test]
fn thread_ranks_take_element_wise_extremes() {
    // Keys whose bits would be NaN as f64 must cross unchanged too.
    let nan_bits = 0x7FF8_0000_0000_0001u64;
    let results = ThreadGroup::run(3, move |comm| {
        let r = comm.rank() as u64;
        let mut mins = vec![10 - r, u64::MAX, nan_bits - r];
        let mut maxs = vec![10 + r, 0, nan_bits + r];
        comm.min_max_u64(&mut mins, &mut maxs)?;
        Ok((mins, maxs))
    });
    for r in results {
        let (mins, maxs) = r.unwrap();
        assert_eq!(mins, vec![8, u64::MAX, nan_bits - 2]);
        assert_eq!(maxs, vec![12, 0, nan_bits + 2]);
    }
    let (mut lo, mut hi) = (vec![5], vec![6]);
    SingleProcess.min_max_u64(&mut lo, &mut hi).unwrap();
    assert_eq!((lo, hi), (vec![5], vec![6]));
}

#[test]
fn mismatched_lengths_are_an_error() {
    let results = ThreadGroup::run(2, |comm| comm.gather_f64(&vec![0.0; comm.rank() + 1]));
    assert!(results.iter().all(|r| r.is_err()));
}
