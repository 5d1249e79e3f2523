"""Code that students and the grader both use: the synthetic scenes, the vocabulary, the pretrained
encoder and its cached annotation grids, the training loop, caption parsing and the metrics, and plots."""
