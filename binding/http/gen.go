package http

//go:generate go run ../../codegen -idl ../../idl/http.idl -dep ../../idl/core.idl -out .
