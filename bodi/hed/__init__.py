"""HED, the Hamming embedding via dictionaries (paper, Sec. 3): everything BODi adds to a GP.

* :mod:`bodi.hed.dictionaries`: the dictionary constructions (Alg. 1, appendix Alg. 3 and 4)
  and Proposition 3's coherence and cardinality bound;
* :mod:`bodi.hed.embedding`: the embedding ``phi_A(z)_i = h(a_i, z)`` as one matrix product
  (Proposition 1 for binary columns, a one-hot product for categorical ones);
* :mod:`bodi.hed.kernel`: the kernel ``k_base(phi_A(z) / d, phi_A(z') / d)``, and its limit
  for many random rows, a kernel of the exact Hamming distance.

The GP on it is :func:`bodi.models.gp.make_hed_model`.
"""

from bodi.hed.dictionaries import DICTIONARY_KINDS, Dictionary, make_dictionary
from bodi.hed.embedding import affine_embedding, hamming_embedding, one_hot, onehot_embedding
from bodi.hed.kernel import HammingDistanceKernel, HammingEmbeddingKernel

__all__ = [
    "DICTIONARY_KINDS",
    "Dictionary",
    "HammingDistanceKernel",
    "HammingEmbeddingKernel",
    "affine_embedding",
    "hamming_embedding",
    "make_dictionary",
    "one_hot",
    "onehot_embedding",
]
