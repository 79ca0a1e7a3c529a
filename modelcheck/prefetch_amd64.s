#include "textflag.h"

// func prefetchLinesAsm(slots []*uint64, write bool)
TEXT ·prefetchLinesAsm(SB), NOSPLIT, $0-25
	MOVQ slots_base+0(FP), SI
	MOVQ slots_len+8(FP), CX
	MOVBLZX write+24(FP), DX
	TESTQ CX, CX
	JEQ done
loop:
	MOVQ (SI), AX
	TESTL DX, DX
	JEQ read
	// PREFETCHW (AX), which the assembler does not name: 0F 0D /1.
	BYTE $0x0F; BYTE $0x0D; BYTE $0x08
	JMP next
read:
	PREFETCHT0 (AX)
next:
	ADDQ $8, SI
	DECQ CX
	JNE loop
done:
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
