#include "textflag.h"

// func prefetchLinesT0(slots []*uint64)
TEXT ·prefetchLinesT0(SB), NOSPLIT, $0-24
	MOVQ slots_base+0(FP), SI
	MOVQ slots_len+8(FP), CX
	TESTQ CX, CX
	JEQ done
loop:
	MOVQ (SI), AX
	PREFETCHT0 (AX)
	ADDQ $8, SI
	DECQ CX
	JNE loop
done:
	RET

// func prefetchLinesW(slots []*uint64)
TEXT ·prefetchLinesW(SB), NOSPLIT, $0-24
	MOVQ slots_base+0(FP), SI
	MOVQ slots_len+8(FP), CX
	TESTQ CX, CX
	JEQ donew
loopw:
	MOVQ (SI), AX
	// PREFETCHW (AX), which the assembler does not name: 0F 0D /1.
	BYTE $0x0F; BYTE $0x0D; BYTE $0x08
	ADDQ $8, SI
	DECQ CX
	JNE loopw
donew:
	RET

// func cpuid(leaf uint32) (a, b, c, d uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	XORL CX, CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET
