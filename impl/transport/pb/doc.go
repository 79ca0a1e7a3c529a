// Package pb holds the protocol's messages and gRPC services as Protocol
// Buffers: drainproof.proto and the Go code protoc generates from it
// (make proto regenerates it). Package transport maps these messages to
// and from the library's types (node.Heartbeat, eventservice.Request,
// logcoord.Answer, ...); nothing else imports this package.
package pb
