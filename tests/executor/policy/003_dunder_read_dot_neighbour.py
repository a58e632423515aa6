# expect: native
x = 3 + 4j
(x.real, x.imag, (5).bit_length(), 'a'.upper())
