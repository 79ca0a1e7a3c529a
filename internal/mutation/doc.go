// Package mutation reads mutation-testing results (the JSON that
// go-gremlins writes with -o) and the checked-in list of equivalent
// mutants (equivalent.txt), and judges them: per package, the mutants
// killed, lived and not covered, the efficacy (killed over killed plus
// lived, equivalent mutants set aside), and every surviving mutant that is
// neither killed nor argued equivalent. `make mutate` runs gremlins over
// the product, the validator, spec and modelcheck, then ./report.
//
// A mutant listed as equivalent must still exist: a test reads each entry's
// file at its line and column and requires the operator the mutator
// changes to be there, and the line to be the code the entry quotes, so
// the list cannot outlive the code it argues about; an entry whose line
// moved is reported with the line the code is now on.
package mutation
