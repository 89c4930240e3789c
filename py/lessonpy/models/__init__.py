"""The trained models: MiniLM in NumPy (``minilm``), its tokenizer (``wordpiece``) and weights reader
(``safetensors``); SmolLM2 in NumPy (``smollm2``), its byte-level BPE (``bpe``) and 4-bit weights file
(``quantised``); the real heads' shipped data (``realheads``, ``site_data``) with the field's head tests
(``head_tests``), what each head writes (``head_writes``), the knock-outs (``ablation``) and changed heads
(``sentence_changes``), and the live panel's Python (``live``). It imports itself and ``maths``, never
``runtime``: what it needs of the page (the reader's cells) is passed in, and never a course.
"""
