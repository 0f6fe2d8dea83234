#include "textflag.h"

// func laneAMD64(p []byte, i, depth int, arr bool, stack *uint64, maxDepth, base, n int, masks *byte) (ri, rdepth int, rarr bool, ex laneExit)
//
// lane (lane.go) in assembly, with the same states, the same exits and
// the same rules: see lane for what it does and why. Go lays out lane's
// common path with a taken branch at nearly every token; here that path
// falls through.
//
// Registers:
//	SI  p's first byte    R8  len(p)
//	AX  i                 DX  depth
//	R9  arr (0 or 1)      R10 stack
//	R12 base              R13 n
//	DI  masks             BX, CX, R11 scratch
//
// The exit codes are lane.go's laneExit values.
#define exAfter 0
#define exEnd 1
#define exValue 2
#define exFirst 3
#define exObjectKey 4
#define exColon 5
#define exValStr 6
#define exKeyStr 7

// Bits 9, 10, 13 and 32: '\t', '\n', '\r' and ' ', JSON's whitespace.
#define SPACES $0x100002600

// IS_SPACE jumps to yes when the byte in CX is JSON whitespace; it
// clobbers R11.
#define IS_SPACE(yes) \
	CMPQ CX, $32 \
	JA 3(PC) \
	MOVQ SPACES, R11 \
	BTQ CX, R11 \
	JCS yes

// STRING(outside, long, end, open) runs a string's body from i (AX) and
// leaves i after its closing quote. The end of its plain bytes, BX, is
// window.find's answer: from one load of the masks (window.at), or by
// outside when the window does not hold i, or by long (with CX =
// (i-base)&7) when the load holds no set bit; both come back to end with
// BX set. It goes to open when p[BX] is not a closing quote (an escape, a
// control byte, the chunk's end). It clobbers BX and CX.
#define STRING(outside, long, end, open) \
	MOVQ AX, BX \
	SUBQ R12, BX \
	CMPQ BX, R13 \
	JAE outside \
	MOVQ BX, CX \
	SHRQ $3, BX \
	MOVQ (DI)(BX*1), BX \
	ANDQ $7, CX \
	SHRQ CX, BX \
	TESTQ BX, BX \
	JEQ long \
	TZCNTQ BX, BX \
	ADDQ AX, BX \
end: \
	CMPQ BX, R8 \
	JAE open \
	MOVBQZX (SI)(BX*1), CX \
	CMPQ CX, $'"' \
	JNE open \
	LEAQ 1(BX), AX

// SKIP_SPACE(skip, back, exit) follows a token's test that p[i] = CX
// failed: it goes to exit unless CX is JSON whitespace, which it steps
// over (at skip) and goes back to test the next byte. It clobbers R11.
#define SKIP_SPACE(skip, back, exit) \
	IS_SPACE(skip) \
	JMP exit \
skip: \
	INCQ AX \
	JMP back

// LONG(loop, found, done, outside) is STRING's long path, window.find
// from the load after the one at i (AX), where CX = (i-base)&7: the first
// byte from there on that ends plain string content, or the window's end;
// the result in BX, and then a jump to done. At outside, STRING's other
// way out, it answers i itself, as window.find does for an i the window
// does not hold. It clobbers CX and R11.
#define LONG(loop, found, done, outside) \
	LEAQ 64(AX), BX \
	SUBQ CX, BX \
loop: \
	MOVQ BX, CX \
	SUBQ R12, CX \
	CMPQ CX, R13 \
	JAE done \
	MOVQ CX, R11 \
	SHRQ $3, R11 \
	MOVQ (DI)(R11*1), R11 \
	ANDQ $7, CX \
	SHRQ CX, R11 \
	TESTQ R11, R11 \
	JNE found \
	ADDQ $64, BX \
	SUBQ CX, BX \
	JMP loop \
found: \
	TZCNTQ R11, R11 \
	ADDQ R11, BX \
	JMP done \
outside: \
	MOVQ AX, BX \
	JMP done

// PUSH(op) opens a container one level deeper (DX), at the depth limit
// leaving with exValue, and marks it in the stack bitmap (R10): op is
// BTRQ for an object, BTSQ for an array. It clobbers BX and R11.
#define PUSH(op) \
	CMPQ DX, maxDepth+56(FP) \
	JEQ exitValue \
	INCQ DX \
	MOVQ DX, BX \
	SHRQ $6, BX \
	MOVQ (R10)(BX*8), R11 \
	op DX, R11 \
	MOVQ R11, (R10)(BX*8)

// TOKEN(c, exit, other) steps over p[i] (AX) when it is the byte c, and
// otherwise goes to exit at the chunk's end, or to other with p[i] in CX.
#define TOKEN(c, exit, other) \
	CMPQ AX, R8 \
	JAE exit \
	MOVBQZX (SI)(AX*1), CX \
	CMPQ CX, $c \
	JNE other \
	INCQ AX

// EXIT stores the results and returns.
#define EXIT(code) \
	MOVQ AX, ri+88(FP) \
	MOVQ DX, rdepth+96(FP) \
	MOVB R9, rarr+104(FP) \
	MOVB $code, ex+105(FP) \
	RET

TEXT ·laneAMD64(SB), NOSPLIT, $0-106
	MOVQ p_base+0(FP), SI
	MOVQ p_len+8(FP), R8
	MOVQ i+24(FP), AX
	MOVQ depth+32(FP), DX
	MOVBQZX arr+40(FP), R9
	MOVQ stack+48(FP), R10
	MOVQ base+64(FP), R12
	MOVQ n+72(FP), R13
	MOVQ masks+80(FP), DI

after: // a value ended just before p[i]
	TOKEN(',', exitAfter, afterOther)
	TESTQ R9, R9
	JNE value

key: // after ',' in an object: a key due at p[i]
	TOKEN('"', exitObjectKey, keyOther)

keyBody: // p[i-1] opened a key
	STRING(keyOutside, keyLong, keyEnd, exitKeyStrAt)

colon: // a key ended just before p[i]
	TOKEN(':', exitColon, colonOther)

value: // a value due at p[i]
	TOKEN('"', exitValue, valueOther)

valBody: // p[i-1] opened a string value
	STRING(valOutside, valLong, valEnd, exitValStrAt)
	JMP after

	// Off the common path of compact JSON.

afterOther: // p[i] = CX after a value is not ','
	CMPQ CX, $'}'
	JNE afterBracket
	TESTQ R9, R9
	JNE exitAfter
	INCQ AX
	JMP pop

afterBracket:
	CMPQ CX, $']'
	JNE afterSpace
	TESTQ R9, R9
	JEQ exitAfter
	INCQ AX
	JMP pop

afterSpace:
	SKIP_SPACE(afterSkip, after, exitAfter)

pop: // p[i-1] closed the innermost container
	DECQ DX
	MOVQ DX, BX
	SHRQ $6, BX
	MOVQ (R10)(BX*8), BX
	MOVQ DX, CX
	SHRQ CX, BX
	ANDQ $1, BX
	MOVQ BX, R9
	CMPQ DX, $1
	JGT after
	EXIT(exEnd)

keyOther: // p[i] = CX, where a key is due, is not '"'
	SKIP_SPACE(keySkip, key, exitObjectKey)

keyLong: // a key longer than one load of the masks: CX = k&7
	LONG(keyFind, keyFound, keyEnd, keyOutside)

colonOther: // p[i] = CX, where a colon is due, is not ':'
	SKIP_SPACE(colonSkip, colon, exitColon)

valLong: // a string longer than one load of the masks: CX = k&7
	LONG(valFind, valFound, valEnd, valOutside)

valueOther: // p[i] = CX starts a value other than a string
	CMPQ CX, $'{'
	JEQ object
	LEAQ -48(CX), BX
	CMPQ BX, $9
	JLS number
	CMPQ CX, $'t'
	JEQ true
	CMPQ CX, $'f'
	JEQ false
	CMPQ CX, $'['
	JEQ array
	CMPQ CX, $'n'
	JEQ null
	CMPQ CX, $'-'
	JEQ number
	SKIP_SPACE(valueSkip, value, exitValue)

object:
	PUSH(BTRQ)
	XORQ R9, R9
	INCQ AX
	TOKEN('"', exitFirst, objectOther)
	JMP keyBody

objectOther:
	CMPQ CX, $'}'
	JNE exitFirst
	INCQ AX
	JMP pop

array:
	PUSH(BTSQ)
	MOVQ $1, R9
	INCQ AX
	TOKEN(']', exitFirst, arrayOther)
	JMP pop

arrayOther:
	IS_SPACE(exitFirst)
	JMP value

true:
	MOVQ R8, BX
	SUBQ AX, BX
	CMPQ BX, $4
	JLT exitValue
	CMPL (SI)(AX*1), $0x65757274
	JNE exitValue
	ADDQ $4, AX
	JMP after

false:
	MOVQ R8, BX
	SUBQ AX, BX
	CMPQ BX, $5
	JLT exitValue
	CMPL (SI)(AX*1), $0x736c6166
	JNE exitValue
	CMPB 4(SI)(AX*1), $'e'
	JNE exitValue
	ADDQ $5, AX
	JMP after

null:
	MOVQ R8, BX
	SUBQ AX, BX
	CMPQ BX, $4
	JLT exitValue
	CMPL (SI)(AX*1), $0x6c6c756e
	JNE exitValue
	ADDQ $4, AX
	JMP after

number: // an integer, -?(0|[1-9][0-9]*), then a byte that cannot continue it
	MOVQ AX, BX
	CMPQ CX, $'-'
	JNE numberFirst
	INCQ BX
	CMPQ BX, R8
	JAE exitValue
	MOVBQZX (SI)(BX*1), CX

numberFirst: // p[BX] = CX is the first digit
	INCQ BX
	CMPQ CX, $'0'
	JEQ numberTail
	LEAQ -49(CX), CX
	CMPQ CX, $8
	JHI exitValue

numberDigits:
	CMPQ BX, R8
	JAE exitValue
	MOVBQZX (SI)(BX*1), CX
	LEAQ -48(CX), R11
	CMPQ R11, $9
	JHI numberEnd
	INCQ BX
	JMP numberDigits

numberTail: // after a leading 0
	CMPQ BX, R8
	JAE exitValue
	MOVBQZX (SI)(BX*1), CX

numberEnd: // p[BX] = CX follows the digits
	CMPQ CX, $'.'
	JEQ exitValue
	CMPQ CX, $'e'
	JEQ exitValue
	CMPQ CX, $'E'
	JEQ exitValue
	MOVQ BX, AX
	JMP after

exitAfter:
	EXIT(exAfter)

exitValue:
	EXIT(exValue)

exitFirst:
	EXIT(exFirst)

exitObjectKey:
	EXIT(exObjectKey)

exitColon:
	EXIT(exColon)

exitValStrAt: // in a value string's body at BX
	MOVQ BX, AX
	EXIT(exValStr)

exitKeyStrAt: // in a key string's body at BX
	MOVQ BX, AX
	EXIT(exKeyStr)
