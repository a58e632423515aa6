z = complex(3, 4)
print(z.real, z.imag, abs(z), z.conjugate(), z * 1j, z == 3 + 4j)
z / 2
