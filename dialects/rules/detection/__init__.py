"""Rules of the object-detection operations: non-maximum suppression
(``nms``), SSD post-processing (``ssd``), region proposals and box transforms
(``proposals``) and region-of-interest pooling and keypoints (``roi``).

Their records name the family ``detection.<module>``; importing
:mod:`nnc.dialects.rules` imports each module.
"""
