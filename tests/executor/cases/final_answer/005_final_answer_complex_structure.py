final_answer([1, (2, 3), {'k': {4}}, None, 1.5])
