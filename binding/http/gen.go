package http

//go:generate go tool codegen -idl ../../idl/http.idl -dep ../../idl/core.idl -out .
