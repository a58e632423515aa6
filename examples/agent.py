"""Using pyfenced from Python: the client, tagged values, and the smolagents-style executor.

    PYTHONPATH=client/python PYFENCE_SOCKET=run/pyfence.sock python3 examples/agent.py
"""

import datetime

from pyfence import Client, ExecutionError, PyfenceExecutor

with Client() as client:
    print("daemon:", client.hello()["version"])

    # Output streams while the snippet runs; the last expression is the result.
    r = client.exec("for i in range(3):\n    print('step', i)\n(i, {i: 'last'})",
                    on_output=lambda text: print(text, end=""))
    print("result:", r.output, "ok:", r.ok, "ops:", r.stats["ops"])

    # Values cross both ways as tagged JSON: tuples, sets, bytes, dates... stay what they are.
    r = client.exec("(when + delta).isoformat(), sorted(tags)",
                    variables={"when": datetime.date(2024, 2, 28), "delta": datetime.timedelta(days=2),
                               "tags": {"b", "a"}}, imports=["datetime"])
    print("result:", r.output)

    # A failing snippet is a result, not an exception (unless you ask for one).
    r = client.exec("1 / 0")
    print("outcome:", r.outcome, "-", r.error["message"])

    # Limits may be tightened per call, never loosened.
    r = client.exec("for i in range(10**12): pass", timeout=0.2)
    print("outcome:", r.outcome)

# The smolagents-compatible executor: executor(code) -> CodeOutput(output, logs, is_final_answer).
with PyfenceExecutor(additional_authorized_imports=["json"], timeout=5) as executor:
    executor.send_variables({"question": "2 + 2"})
    out = executor("import json\nprint(json.dumps({'q': question}))\nfinal_answer(4)")
    print("final answer:", out.output, "logs:", out.logs.strip(), "is_final_answer:", out.is_final_answer)
    try:
        executor("undefined_name")
    except ExecutionError as e:
        print("agent sees:", e.message)
