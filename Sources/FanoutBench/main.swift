print("fanout-bench")
