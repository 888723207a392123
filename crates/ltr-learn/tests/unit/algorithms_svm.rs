use ltr_core::Params;

use ltr_learn::algorithms::svm::{rsvm_ir_params, NEWTON_FROM_DOCS, RSVM_IR_SPECS, SOLVER_SPECS};
use ltr_learn::SpecReader;
use ltr_svm::RankSvmParams;

fn rsvm_ir_at(given: &[(&str, &str)], n_docs: u64) -> RankSvmParams {
    let params = Params::new(given.iter().copied());
    let r = SpecReader::new(&params, &[RSVM_IR_SPECS, SOLVER_SPECS]);
    let p = rsvm_ir_params(&r, n_docs).unwrap();
    r.finish("rsvm-ir").unwrap();
    p.into_inner()
}

#[test]
fn rsvm_ir_defaults_to_newton_from_a_million_documents_unless_a_solver_or_the_hinge_is_named() {
    let ocas = rsvm_ir_at(&[("solver", "ocas")], 10);
    let newton = rsvm_ir_at(&[("solver", "newton")], 10);
    assert_ne!(ocas, newton);
    assert_eq!(rsvm_ir_at(&[], NEWTON_FROM_DOCS - 1), ocas);
    assert_eq!(rsvm_ir_at(&[], NEWTON_FROM_DOCS), newton);
    assert_eq!(rsvm_ir_at(&[], 40 * NEWTON_FROM_DOCS), newton);
    assert_eq!(
        rsvm_ir_at(&[("solver", "ocas")], 40 * NEWTON_FROM_DOCS),
        ocas
    );
    // Naming the hinge keeps the solver that minimises it.
    assert_eq!(
        rsvm_ir_at(&[("loss", "hinge")], 40 * NEWTON_FROM_DOCS),
        rsvm_ir_at(&[("loss", "hinge")], 10)
    );
    assert_eq!(rsvm_ir_at(&[("loss", "hinge")], 10), ocas);
    // Naming the squared hinge picks the solver that minimises it, at any size.
    assert_eq!(rsvm_ir_at(&[("loss", "squared-hinge")], 10), newton);
    assert_eq!(rsvm_ir_at(&[("loss", "l2")], 40 * NEWTON_FROM_DOCS), newton);
    // The gradient-descent variant keeps its own solver at any size.
    assert_eq!(
        rsvm_ir_at(&[("variant", "gd")], 40 * NEWTON_FROM_DOCS),
        rsvm_ir_at(&[("variant", "gd")], 10)
    );
}
