"""Synthetic video in the layouts of the datasets the paper trains on: real encoded files (PyAV) whose classes
need appearance *and* motion (Kinetics-like by default; SSv2-like and Charades-like kinds keep those datasets'
nature). Use a generated folder with ``data.name=synthetic data.root={out}`` (or ``ssv2``, ``charades``).

Modules, in the order a dataset is made: :mod:`.classes` (what a class is), :mod:`.config` (the settings, presets
and kinds), :mod:`.videos` (what each video shows and its file), :mod:`.motion` and :mod:`.render` (the frames),
:mod:`.encode` (the files), :mod:`.annotation_files` (the lists the readers read), :mod:`.make` (a whole dataset,
idempotently).
"""
