// Package pki makes the certificates a mutual-TLS cluster runs with, for
// tests and for checker cluster --tls: a throwaway certificate authority,
// certificates it issues (a process's identity in the subject's common
// name and in a URI SAN drainproof://ID, valid for 127.0.0.1, ::1 and
// localhost, for both server and client authentication), and the bad
// certificates the TLS tests present (self-signed, from another
// authority, expired).
//
// It mirrors no TLA+ module: who may talk to whom is below the model's
// detail (the model assumes every message comes from the process it
// names; mutual TLS and impl/transport's Access make that true on the
// wire). It imports nothing of ours.
package pki
