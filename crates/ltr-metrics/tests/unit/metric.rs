use ltr_metrics::*;

#[test]
fn names_roundtrip() {
    for s in [
        "NDCG@10", "NDCG", "DCG@5", "MAP", "MAP@10", "P@5", "MRR", "MRR@10", "ERR@20", "R-prec",
        "bpref", "RankEff", "AUC", "OER", "OER(2,1)", "Q", "MeanNDCG",
    ] {
        let m: Metric = s.parse().unwrap();
        assert_eq!(m.to_string(), s);
    }
    assert_eq!("ndcg@3".parse::<Metric>().unwrap(), Metric::Ndcg(Some(3)));
    assert_eq!(
        "OER(1,2)".parse::<Metric>().unwrap(),
        Metric::Oer(Some((2, 1)))
    );
    for bad in ["NDCG@0", "P", "foo", "MAP@x", "bpref@3", "OER(1,1)"] {
        assert!(bad.parse::<Metric>().is_err(), "{bad}");
    }
}

#[test]
fn ir_measures_syntax() {
    for s in [
        "R@10",
        "R",
        "Success@5",
        "NumRet",
        "NumRel",
        "NumRelRet",
        "IPrec@0.25",
        "IPrec@0",
        "IPrec@1",
        "SetP",
        "SetR",
        "SetF",
        "SetF(beta=0.5)",
        "Judged@10",
        "Judged",
        "RBP(p=0.8)",
        "RBPResidual(p=0.95)",
        "P(rel=2)@5",
        "MAP(rel=2)",
        "MAP(rel=2)@10",
        "NDCG(judged_only=True)@10",
        "NDCG(judged_only=True)",
        "P(judged_only=True,rel=3)@10",
        "SetF(beta=0.5,judged_only=True,rel=2)",
        "RBP(p=0.5,rel=2)",
        "R-prec(rel=2)",
        "bpref(rel=2)",
        "IPrec(rel=2)@0.5",
    ] {
        let m: Metric = s.parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.to_string(), s);
        assert_eq!(m.to_string().parse::<Metric>().unwrap(), m);
    }
    let p = |s: &str| s.parse::<Metric>().unwrap();
    assert_eq!(p("nDCG@10"), Metric::Ndcg(Some(10)));
    assert_eq!(p("AP"), Metric::Ap(None));
    assert_eq!(p("RR@10"), Metric::Rr(Some(10)));
    assert_eq!(p("Rprec"), Metric::RPrec);
    assert_eq!(p("Bpref"), Metric::Bpref);
    assert_eq!(p("RBP"), p("RBP(p=0.8)"));
    assert_eq!(p("SetF(beta=1)"), p("SetF"));
    assert_eq!(p("P(rel=1, judged_only=False)@5").to_string(), "P(rel=1)@5");
    assert_eq!(p("nDCG(judged_only=False)@5"), Metric::Ndcg(Some(5)));
    assert_eq!(p("NumRet(rel=2)"), p("NumRelRet(rel=2)"));
    for bad in [
        "nDCG(rel=2)@10",
        "Bpref(judged_only=True)",
        "P(rel=x)@5",
        "P(foo=1)@5",
        "Judged(rel=1)@5",
        "IPrec@1.5",
        "IPrec",
        "RBP(p=1)",
        "RBP(p=0.8)@10",
        "SetF(beta=-1)",
        "Success",
        "P(rel=2@5",
        "nDCG(judged_only=yes)",
    ] {
        assert!(bad.parse::<Metric>().is_err(), "{bad}");
    }
}

#[test]
fn catalogue_examples_parse() {
    for m in MEASURES {
        let first = m.syntax.split(" | ").next().unwrap();
        let example = first
            .replace("[@k]", "@10")
            .replace("@k", "@10")
            .replace("@r", "@0.5");
        assert!(example.parse::<Metric>().is_ok(), "{example}");
    }
}
