#include "textflag.h"

DATA quote<>+0(SB)/1, $0x22
GLOBL quote<>(SB), RODATA|NOPTR, $1
DATA backslash<>+0(SB)/1, $0x5c
GLOBL backslash<>(SB), RODATA|NOPTR, $1
DATA control<>+0(SB)/1, $0x1f
GLOBL control<>(SB), RODATA|NOPTR, $1

// func stringMasksAVX2(dst *byte, p *byte, blocks int, hi uint64)
//
// For each 64-byte block of p, one little-endian word of dst: bit k is
// set when byte k is '"', '\', below 0x20, or (when hi is all ones) at
// least 0x80.
TEXT ·stringMasksAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ p+8(FP), SI
	MOVQ blocks+16(FP), CX
	MOVQ hi+24(FP), R8
	VPBROADCASTB quote<>(SB), Y1
	VPBROADCASTB backslash<>(SB), Y2
	VPBROADCASTB control<>(SB), Y3 // the highest control byte
	TESTQ CX, CX
	JZ done

loop:
	VMOVDQU (SI), Y0
	VMOVDQU 32(SI), Y8
	VPCMPEQB Y1, Y0, Y4
	VPCMPEQB Y2, Y0, Y5
	VPMAXUB Y3, Y0, Y6
	VPCMPEQB Y3, Y6, Y6
	VPOR Y4, Y5, Y4
	VPOR Y4, Y6, Y4
	VPCMPEQB Y1, Y8, Y9
	VPCMPEQB Y2, Y8, Y10
	VPMAXUB Y3, Y8, Y11
	VPCMPEQB Y3, Y11, Y11
	VPOR Y9, Y10, Y9
	VPOR Y9, Y11, Y9
	VPMOVMSKB Y4, AX
	VPMOVMSKB Y0, R9
	ANDQ R8, R9
	ORQ R9, AX
	VPMOVMSKB Y9, BX
	VPMOVMSKB Y8, R10
	ANDQ R8, R10
	ORQ R10, BX
	SHLQ $32, BX
	ORQ BX, AX
	MOVQ AX, (DI)
	ADDQ $64, SI
	ADDQ $8, DI
	DECQ CX
	JNZ loop

done:
	VZEROUPPER
	RET
