data = [3, 1, 2]
data.sort()
# ---
final_answer(data)
