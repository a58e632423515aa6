# expect: refused Printed output exceeded max_output_bytes
for i in range(10 ** 6):
    print('x' * 100)
