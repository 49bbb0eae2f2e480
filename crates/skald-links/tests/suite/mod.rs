mod matrix;
