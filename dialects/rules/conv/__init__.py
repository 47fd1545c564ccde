"""Rules of the convolution family, one module per operation
(``conv_2d``, ``depthwise``, ``grouped``, ``transpose``, ``fully_connected``)
around the shared window arithmetic (``window``).

Their records name the family ``conv.<module>``; importing
:mod:`nnc.dialects.rules` imports each module.
"""
