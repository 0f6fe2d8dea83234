package proxy

//go:generate go tool codegen -idl ../../../idl/proxy.idl -dep ../../../idl/core.idl -out .
