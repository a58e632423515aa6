count = 0
while True:
    count += 1
    if count == 3:
        final_answer(count)
