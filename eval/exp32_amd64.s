#include "textflag.h"

// func expShiftAVX2(dst, src *float32, n int, m float32, k *[13][8]float32) (done int, sum float64)
// dst[i] = e^(src[i]-m) for whole 8-lane blocks; stops before a block with
// a NaN or a value above k[11] (88). Lanes below k[10] (ln 2^-126) give 0.
// Constants: k[0] log2e, k[1] ln2hi, k[2] ln2lo, k[3..8] polynomial, k[9] 1,
// k[10] lo, k[11] hi, k[12] exponent bias 127 (int32 lanes).
TEXT ·expShiftAVX2(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Y0
	MOVQ k+32(FP), R8
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	XORQ AX, AX

loop:
	LEAQ 8(AX), DX
	CMPQ DX, CX
	JGT  end
	VMOVUPS (SI)(AX*4), Y1
	VSUBPS Y0, Y1, Y1                // x = src - m
	VCMPPS $0x1e, 352(R8), Y1, Y6    // x > hi
	VCMPPS $3, Y1, Y1, Y7            // x is NaN
	VORPS  Y7, Y6, Y6
	VMOVMSKPS Y6, DX
	TESTL DX, DX
	JNE  end
	VCMPPS $1, 320(R8), Y1, Y7       // x < lo: result 0
	VMULPS (R8), Y1, Y2
	VROUNDPS $0, Y2, Y2              // n = round(x·log2e)
	VMOVAPS Y1, Y3
	VFNMADD231PS 32(R8), Y2, Y3      // r = x - n·ln2hi
	VFNMADD231PS 64(R8), Y2, Y3      //     - n·ln2lo
	VMOVUPS 96(R8), Y4
	VFMADD213PS 128(R8), Y3, Y4      // p = p·r + c
	VFMADD213PS 160(R8), Y3, Y4
	VFMADD213PS 192(R8), Y3, Y4
	VFMADD213PS 224(R8), Y3, Y4
	VFMADD213PS 256(R8), Y3, Y4
	VMULPS Y3, Y3, Y5
	VFMADD213PS Y3, Y5, Y4           // p·r² + r
	VADDPS 288(R8), Y4, Y4           // + 1
	VCVTPS2DQ Y2, Y12
	VPADDD 384(R8), Y12, Y12
	VPSLLD $23, Y12, Y12             // 2^n
	VMULPS Y12, Y4, Y4
	VANDNPS Y4, Y7, Y4               // underflowed lanes to 0
	VMOVUPS Y4, (DI)(AX*4)
	VCVTPS2PD X4, Y10
	VEXTRACTF128 $1, Y4, X11
	VCVTPS2PD X11, Y11
	VADDPD Y10, Y8, Y8
	VADDPD Y11, Y9, Y9
	ADDQ $8, AX
	JMP  loop

end:
	VADDPD Y9, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPD X9, X8, X8
	VHADDPD X8, X8, X8
	MOVQ AX, done+40(FP)
	VMOVSD X8, sum+48(FP)
	VZEROUPPER
	RET
