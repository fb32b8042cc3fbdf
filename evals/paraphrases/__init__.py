"""Paraphrases: generate them through the gateway, review them, freeze the approved ones."""
