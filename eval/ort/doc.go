package ort
