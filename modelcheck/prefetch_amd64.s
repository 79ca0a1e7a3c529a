#include "textflag.h"

// func prefetchLines(slots []*uint64)
TEXT ·prefetchLines(SB), NOSPLIT, $0-24
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
