package all

//go:generate go run ../internal/mkall -cfg ../bindings.cfg -out all_gen.go
