use ltr_core::*;

fn order(scores: &[f64]) -> Vec<usize> {
    let p = positions(scores);
    let mut o = vec![0; p.len()];
    for (d, &r) in p.iter().enumerate() {
        o[r] = d;
    }
    o
}

#[test]
fn positions_break_ties_by_input_order() {
    assert_eq!(positions(&[1.0, 3.0, 3.0, 0.0]), vec![2, 0, 1, 3]);
}

#[test]
fn borda_by_hand() {
    // Lists over docs a,b,c: (a>b>c), (b>a>c), (b>c>a). Points: a=2+1+0=3, b=1+2+2=5, c=0+0+1=1.
    let lists = vec![
        vec![3.0, 2.0, 1.0],
        vec![2.0, 3.0, 1.0],
        vec![1.0, 3.0, 2.0],
    ];
    let mut out = vec![0.0; 3];
    aggregate(&lists, &[1.0, 1.0, 1.0], Aggregation::Borda, &mut out);
    assert_eq!(out, vec![3.0, 5.0, 1.0]);
    aggregate(&lists, &[1.0, 1.0, 1.0], Aggregation::BordaFuse, &mut out);
    assert_eq!(out, vec![6.0, 8.0, 4.0]);
    // Weighted: only the first list counts.
    aggregate(&lists, &[1.0, 0.0, 0.0], Aggregation::Borda, &mut out);
    assert_eq!(order(&out), vec![0, 1, 2]);
    // Weights 2,1,1: a = 4+1+0 = 5, b = 2+2+2 = 6, c = 0+0+1 = 1.
    aggregate(&lists, &[2.0, 1.0, 1.0], Aggregation::Borda, &mut out);
    assert_eq!(out, vec![5.0, 6.0, 1.0]);
}

#[test]
fn median_by_hand() {
    // Positions: a: 0,1,2 → median 1; b: 1,0,0 → 0; c: 2,2,1 → 2.
    let lists = vec![
        vec![3.0, 2.0, 1.0],
        vec![2.0, 3.0, 1.0],
        vec![1.0, 3.0, 2.0],
    ];
    let mut out = vec![0.0; 3];
    aggregate(&lists, &[1.0; 3], Aggregation::MedianRank, &mut out);
    assert_eq!(order(&out), vec![1, 0, 2]);
    // Two lists (even count): lower median. a: 0,1 → 0; b: 1,0 → 0; tie broken by mean (0.5 each) then input order.
    aggregate(
        &lists[..2],
        &[1.0; 2],
        Aggregation::MedianRank,
        &mut out[..],
    );
    assert_eq!(order(&out), vec![0, 1, 2]);
}

#[test]
fn markov_chain_finds_the_condorcet_winner() {
    // b beats a (2 of 3 lists) and c (3 of 3); a beats c (2 of 3): the chain drains into b, then a, then c.
    let lists = vec![
        vec![3.0, 2.0, 1.0],
        vec![2.0, 3.0, 1.0],
        vec![1.0, 3.0, 2.0],
    ];
    let mut out = vec![0.0; 3];
    aggregate(&lists, &[1.0; 3], Aggregation::markov_default(), &mut out);
    assert_eq!(order(&out), vec![1, 0, 2]);
    assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    // Hand-computed stationary distribution for ε = 0 with transitions a→b 1/3, c→a 1/3, c→b 1/3:
    // b is absorbing, so all mass ends on b.
    aggregate(
        &lists,
        &[1.0; 3],
        Aggregation::MarkovMc4 {
            teleport: 0.0,
            max_iter: 10_000,
            tol: 1e-15,
        },
        &mut out,
    );
    assert!((out[1] - 1.0).abs() < 1e-9, "{out:?}");
}
