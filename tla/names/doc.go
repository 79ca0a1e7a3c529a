// Package names is the one Go home of the model's names: the actions, the
// variables and the bugs of tla/DrainRegistration.tla, as constants. The
// model's transcription (spec), the product's trace lines (impl/trace and
// its emitters), its fault points (impl/bugs), the harness's validators
// and the checker's reports all take the names from here, and a test
// holds the list to the .tla: an action, a variable or a bug added to the
// module and not here (or here and not there) fails it. So adding a bug
// touches the TLA+ (its BugNames element and its effect), its constant
// here, its fault point in impl/bugs and the code it perturbs, its .cfg
// and its test.
//
// The mapping from each name to the Go that implements it is written once,
// in tla/README.md, and a test keeps its Go identifiers real.
package names
