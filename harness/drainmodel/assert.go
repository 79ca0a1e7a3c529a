package drainmodel

import (
	"github.com/drainproof/drainproof/modelcheck"
	"github.com/drainproof/drainproof/spec"
)

// The checker finds these optional interfaces by type assertion at run
// time; these lines make a renamed or mistyped method a compile error
// instead of a feature that silently stops working.
var (
	_ modelcheck.Model[spec.State]            = (*spec.Model)(nil)
	_ modelcheck.ActionPropertied[spec.State] = (*spec.Model)(nil)
	_ modelcheck.Describer[spec.State]        = (*spec.Model)(nil)
	_ modelcheck.VarLister[spec.State]        = (*spec.Model)(nil)
	_ modelcheck.Live[spec.State]             = (*spec.Model)(nil)

	_ modelcheck.Constrained[spec.State]       = (*Model)(nil)
	_ modelcheck.ActionConstrained[spec.State] = (*Model)(nil)
	_ modelcheck.Viewed[spec.State]            = (*Model)(nil)
	_ modelcheck.Symmetric[spec.State]         = (*Model)(nil)
	_ modelcheck.Model[spec.State]             = (*recorder)(nil)
	_ modelcheck.ActionPropertied[spec.State]  = (*recorder)(nil)
)
